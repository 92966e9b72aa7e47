/*
Copyright 2026 The pdtopo Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package agentclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

// Room is a room as the agent reports it.
type Room struct {
	Room   int64                 `json:"room"`
	Status receiver.TransferPoll `json:"status"`
	// BootstrapToken is the first generated token, -1 if none was reported.
	BootstrapToken int64 `json:"bootstrapToken"`
	// SpecCandidateIDs are reported only when the room's plan lets the
	// engine use them; nil otherwise.
	SpecCandidateIDs []int32 `json:"specCandidateIds"`
	// FailureCode is a receiver.FailureReason; empty unless Failed.
	FailureCode    string `json:"failureCode"`
	FailureMessage string `json:"failureMessage"`
}

// Request is a room's request: what the reference decode's prefill() sends.
type Request = receiver.TransferRequest

// RegisterEngine registers the engine rank's transfer session and buffers
// (PUT /v1/engine). Registering the same values again is fine.
func (c *Client) RegisterEngine(ctx context.Context, info receiver.EngineInfo) error {
	body, err := engineBody(info)
	if err != nil {
		return err
	}
	return c.call(ctx, http.MethodPut, "/v1/engine", json.RawMessage(body), 0, nil)
}

// Open opens a room against a prefill's bootstrap address (POST /v1/rooms).
func (c *Client) Open(ctx context.Context, bootstrapAddr string, room int64) (Room, error) {
	var r Room
	err := c.call(ctx, http.MethodPost, "/v1/rooms", localapi.OpenBody{BootstrapAddr: &bootstrapAddr, Room: &room}, 0, &r)
	return r, err
}

// Request sends a room's request (POST /v1/rooms/{room}/request); a room
// still Bootstrapping takes it and sends it once bootstrapped.
func (c *Client) Request(ctx context.Context, room int64, req Request) (Room, error) {
	var r Room
	err := c.call(ctx, http.MethodPost, roomPath(room)+"/request", requestBody(req), 0, &r)
	return r, err
}

// Room returns a room's status now (GET /v1/rooms/{room}).
func (c *Client) Room(ctx context.Context, room int64) (Room, error) {
	var r Room
	err := c.call(ctx, http.MethodGet, roomPath(room), nil, 0, &r)
	return r, err
}

// Wait returns a room's status once it finished (Success or Failed), or
// after wait at the latest (GET /v1/rooms/{room}?wait=...), whichever is
// first; wait is at most localapi.MaxWait.
func (c *Client) Wait(ctx context.Context, room int64, wait time.Duration) (Room, error) {
	if wait <= 0 || wait > localapi.MaxWait {
		return Room{}, fmt.Errorf("wait %v: want a duration in (0, %v]", wait, localapi.MaxWait)
	}
	var r Room
	err := c.call(ctx, http.MethodGet, roomPath(room)+"?wait="+wait.String(), nil, wait, &r)
	return r, err
}

// Clear forgets a room (DELETE /v1/rooms/{room}).
func (c *Client) Clear(ctx context.Context, room int64) error {
	return c.call(ctx, http.MethodDelete, roomPath(room), nil, 0, nil)
}

// Healthz checks that the agent answers (GET /healthz).
func (c *Client) Healthz(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/healthz", nil, 0, nil)
}

// Readyz checks that the agent has a plan and can open rooms (GET /readyz);
// an *APIError says why not.
func (c *Client) Readyz(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/readyz", nil, 0, nil)
}

func roomPath(room int64) string { return "/v1/rooms/" + strconv.FormatInt(room, 10) }

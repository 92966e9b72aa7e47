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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

// Options tune a Client; zero values take the defaults.
type Options struct {
	// Timeout bounds each call, connecting included (default 5s). A long
	// poll (Wait) gets its wait on top.
	Timeout time.Duration
	// MaxIdleConns is how many connections are kept open for reuse
	// (default 16): one per goroutine calling at once.
	MaxIdleConns int
}

// DefaultTimeout bounds a call when Options.Timeout is zero: the agent
// answers every call but a long poll without waiting on the network.
const DefaultTimeout = 5 * time.Second

// maxAnswerBytes caps how much of an answer is read: rooms and errors are
// a few hundred bytes.
const maxAnswerBytes = 1 << 20

// errDeadline marks a call that ran out of its own timeout.
var errDeadline = errors.New("the call timed out")

// Client calls one engine rank's agent. It is safe for concurrent use and
// keeps connections open between calls.
type Client struct {
	endpoint string // for messages: "unix:/path" or "tcp:host:port"
	hc       *http.Client
	timeout  time.Duration
	// dial opens a new connection to the agent (the engine stream's).
	dial func(context.Context) (net.Conn, error)
}

// New returns a client for the agent listening on the unix socket at path
// (see SocketPath).
func New(path string, o Options) *Client {
	return newClient("unix:"+path, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}, o)
}

// NewTCP returns a client for an agent serving its API on a loopback
// HOST:PORT (single-rank agents started with --listen HOST:PORT).
func NewTCP(addr string, o Options) *Client {
	return newClient("tcp:"+addr, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	}, o)
}

func newClient(endpoint string, dial func(context.Context) (net.Conn, error), o Options) *Client {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = 16
	}
	tr := &http.Transport{
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
		MaxIdleConns:        o.MaxIdleConns,
		MaxIdleConnsPerHost: o.MaxIdleConns,
		DisableCompression:  true,
	}
	return &Client{endpoint: endpoint, hc: &http.Client{Transport: tr}, timeout: o.Timeout, dial: dial}
}

// Endpoint says where the agent is looked for ("unix:/run/pdtopo/rank-0.sock").
func (c *Client) Endpoint() string { return c.endpoint }

// Close drops the idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// call sends one request and decodes a 2xx answer into out (if not nil).
// extra lengthens the call's timeout (a long poll's wait).
func (c *Client) call(ctx context.Context, method, path string, body any, extra time.Duration, out any) error {
	callName := method + " " + path
	if i := strings.IndexByte(callName, '?'); i >= 0 {
		callName = callName[:i]
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: encoding the body: %w", callName, err)
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout+extra, errDeadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://agent"+path, rd)
	if err != nil {
		return fmt.Errorf("%s: %w", callName, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = fmt.Errorf("%w: %w", cause, err)
		}
		return &UnavailableError{Endpoint: c.endpoint, Call: callName, Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return &UnavailableError{Endpoint: c.endpoint, Call: callName, Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return apiError(callName, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: the agent's answer %q is not the expected JSON: %w", callName, truncate(raw), err)
	}
	return nil
}

func apiError(callName string, status int, raw []byte) *APIError {
	var eb localapi.ErrorBody
	if err := json.Unmarshal(raw, &eb); err == nil && eb.Error.Code != "" {
		return &APIError{Call: callName, HTTPStatus: status, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	return &APIError{Call: callName, HTTPStatus: status, Message: truncate(raw)}
}

func truncate(raw []byte) string {
	const most = 200
	s := strings.TrimSpace(string(raw))
	if len(s) > most {
		return s[:most] + "…"
	}
	return s
}

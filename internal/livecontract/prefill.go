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

package livecontract

import (
	"context"
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
)

// MaxPrefillAnswerBytes caps a bootstrap server's parallel-info answer: a
// 256 KiB contract as a JSON string, whose escaping at most doubles it.
const MaxPrefillAnswerBytes = kvcontract.MaxParallelInfoBytes

// Prefill is what a contract-era bootstrap server answers for
// engine_rank=-1.
type Prefill struct {
	// URL is where it was read.
	URL string
	// TPSize is the whole prefill world, DPSize its DP groups.
	TPSize, DPSize int
	// Contract is the prefill ranks' contract, as the server re-encoded it
	// (the engine's canonical bytes).
	Contract []byte
}

// PrefillURL is the parallel-info URL of the bootstrap server at addr.
func PrefillURL(addr string) string {
	return "http://" + addr + kvwire.RoutePath + "?" + kvwire.ParallelInfoQuery
}

// Prefill reads the prefill's contract from its bootstrap server at addr
// (HOST:PORT). A v1 server is ReasonWrongWire; a contract server no rank
// has registered with yet (cache_layout null) is ReasonNoContract.
func (c *Client) Prefill(ctx context.Context, addr string) (Prefill, error) {
	url := PrefillURL(addr)
	if err := CheckAddress(addr); err != nil {
		detail := "the bootstrap address " + err.Error()
		return Prefill{}, &Error{Reason: ReasonBadAddress, URL: url, Detail: detail, Public: detail}
	}
	body, err := c.get(ctx, url, MaxPrefillAnswerBytes)
	if err != nil {
		return Prefill{}, err
	}
	wire, err := kvwire.AnswerWire(body)
	var p kvcontract.ParallelInfo
	switch {
	case err == nil && wire == kvwire.WireV1:
		v1, err := kvv1.DecodeParallelInfo(body)
		if err != nil {
			return Prefill{}, malformedAnswer(url, body, err)
		}
		// The numbers are decoded ones: the status may show them.
		detail := fmt.Sprintf(
			"the server answers the v1 wire (prefill TP %d, DP %d, %d KV item lengths, no cache_layout): a prefill of tokenspeed from before its cache-contract wire; pair it with wire V1, or point at a contract-era prefill",
			v1.PrefillTPSize, v1.PrefillDPSize, len(v1.KVItemLens))
		return Prefill{}, &Error{Reason: ReasonWrongWire, URL: url, Detail: detail, Public: detail}
	case err == nil:
		p, err = kvcontract.DecodeParallelInfo(body)
	}
	switch {
	case err != nil && wire == kvwire.WireCacheContract && kvwire.ReasonOf(err) == kvwire.ReasonMissingField:
		return Prefill{}, &Error{Reason: ReasonNoContract, URL: url, Detail: fmt.Sprintf("no prefill rank has registered with the server yet (%v)", err),
			Public: "no prefill rank has registered with the server yet (cache_layout is null)"}
	case err != nil:
		return Prefill{}, malformedAnswer(url, body, err)
	}
	return Prefill{URL: url, TPSize: p.PrefillTPSize, DPSize: p.PrefillDPSize, Contract: p.CacheLayout}, nil
}

// malformedAnswer is an answer that is not a bootstrap server's of either
// wire.
func malformedAnswer(url string, body []byte, err error) *Error {
	return &Error{Reason: ReasonMalformed, URL: url, Detail: fmt.Sprintf("%v (the answer, %d bytes, starts %s)", err, len(body), Excerpt(body)),
		Public: fmt.Sprintf("the answer (%d bytes) is not a contract-era bootstrap server's", len(body))}
}

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
)

// EngineAnswer reads what an engine's bootstrap server at addr (HOST:PORT)
// answers at pathQuery (an engine.LivePrefillTeller's request): the body of
// a 200 answer of at most limit bytes, and the URL asked, under the
// client's bounds (timeout, no redirect, no proxy, the allowlist of a
// restricted client). The engine decodes the body; what it refuses is
// Malformed.
func (c *Client) EngineAnswer(ctx context.Context, addr, pathQuery string, limit int64) ([]byte, string, error) {
	url := "http://" + addr + pathQuery
	if err := CheckAddress(addr); err != nil {
		detail := "the bootstrap address " + err.Error()
		return nil, url, &Error{Reason: ReasonBadAddress, URL: url, Detail: detail, Public: detail}
	}
	body, err := c.get(ctx, url, limit)
	if err != nil {
		return nil, url, err
	}
	return body, url, nil
}

// Malformed is an answer the engine would not use: public says why in
// words of pdtopo's own (the status shows it beside the answer's size),
// detail may quote the answer.
func Malformed(url string, body []byte, public, detail string) *Error {
	return &Error{Reason: ReasonMalformed, URL: url, Detail: fmt.Sprintf("%s (the answer, %d bytes, starts %s)", detail, len(body), Excerpt(body)),
		Public: fmt.Sprintf("the answer (%d bytes) %s", len(body), public)}
}

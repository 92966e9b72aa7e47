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
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Reason says why a contract could not be read.
type Reason string

const (
	// ReasonBadAddress: the address is not HOST:PORT.
	ReasonBadAddress Reason = "BadAddress"
	// ReasonUnreachable: no connection (refused, no route, no such host).
	ReasonUnreachable Reason = "Unreachable"
	// ReasonTimeout: no whole answer within the timeout.
	ReasonTimeout Reason = "Timeout"
	// ReasonHTTPStatus: an answer other than 200.
	ReasonHTTPStatus Reason = "HTTPStatus"
	// ReasonTooLarge: an answer longer than the cap.
	ReasonTooLarge Reason = "TooLarge"
	// ReasonMalformed: an answer that does not decode.
	ReasonMalformed Reason = "Malformed"
	// ReasonWrongWire: a bootstrap server answering the v1 wire.
	ReasonWrongWire Reason = "WrongWire"
	// ReasonNoContract: the source has no contract (yet): a bootstrap server
	// no prefill rank registered with, an agent whose engines registered
	// none.
	ReasonNoContract Reason = "NoContract"
	// ReasonChanged: the agent's contract changed between the two reads
	// (its SHA-256 is not the one /v1/agent reported).
	ReasonChanged Reason = "Changed"
)

// Error is a failed read: the reason, the URL and what was wrong, with the
// numbers.
type Error struct {
	Reason Reason
	URL    string
	Detail string
}

func (e *Error) Error() string { return fmt.Sprintf("GET %s: %s: %s", e.URL, e.Reason, e.Detail) }

// ReasonOf is err's Reason, or "" when err is not an *Error.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// DefaultTimeout bounds one request (connection, headers and body).
const DefaultTimeout = 3 * time.Second

// Client reads contracts over HTTP.
type Client struct {
	http *http.Client
	// Timeout bounds each request.
	Timeout time.Duration
}

// NewClient returns a client whose requests each end after timeout
// (DefaultTimeout when 0). It reaches servers directly (no proxy), follows
// no redirect and keeps few idle connections.
func NewClient(timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{
		Timeout: timeout,
		http: &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: &http.Transport{
				Proxy:                  nil,
				DialContext:            (&net.Dialer{Timeout: timeout}).DialContext,
				MaxIdleConnsPerHost:    2,
				IdleConnTimeout:        30 * time.Second,
				DisableCompression:     true, // a gzip bomb is not inflated past the cap, but not asked for either
				MaxResponseHeaderBytes: 16 << 10,
			},
		},
	}
}

// get fetches url and returns the body of a 200 answer of at most limit
// bytes.
func (c *Client) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &Error{Reason: ReasonBadAddress, URL: url, Detail: err.Error()}
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.transportError(url, err)
	}
	defer resp.Body.Close()
	if resp.ContentLength > limit {
		return nil, &Error{Reason: ReasonTooLarge, URL: url, Detail: fmt.Sprintf("the answer is %d bytes (Content-Length); at most %d are read", resp.ContentLength, limit)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return nil, c.transportError(url, err)
	case int64(len(body)) > limit:
		return nil, &Error{Reason: ReasonTooLarge, URL: url, Detail: fmt.Sprintf("the answer is longer than %d bytes; reading stopped there", limit)}
	case resp.StatusCode != http.StatusOK:
		return body, &Error{Reason: ReasonHTTPStatus, URL: url, Detail: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, Excerpt(body))}
	}
	return body, nil
}

func (c *Client) transportError(url string, err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &Error{Reason: ReasonTimeout, URL: url, Detail: fmt.Sprintf("no whole answer within %s", c.Timeout)}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Reason: ReasonTimeout, URL: url, Detail: "cancelled before an answer"}
	}
	return &Error{Reason: ReasonUnreachable, URL: url, Detail: trimURL(err.Error(), url)}
}

// trimURL drops the `Get "URL": ` prefix net/http puts on its errors.
func trimURL(msg, url string) string {
	return strings.TrimPrefix(msg, "Get "+strconv.Quote(url)+": ")
}

// Excerpt quotes the start of an answer for a message.
func Excerpt(b []byte) string {
	const limit = 120
	s := strings.TrimSpace(string(b))
	if len(s) > limit {
		cut := limit
		for cut > 0 && (s[cut]&0xC0) == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return strconv.Quote(s)
}

// CheckAddress accepts HOST:PORT with a DNS name or IP and a port in
// 1..65535, as the engine passes a bootstrap address.
func CheckAddress(addr string) error { return kvwire.CheckBootstrapAddress(addr) }

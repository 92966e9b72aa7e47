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
	// ReasonNotAllowed: the address is outside the allowlist the client
	// was restricted to (Restrict); nothing was sent.
	ReasonNotAllowed Reason = "NotAllowed"
)

// Error is a failed read: the reason, the URL and what was wrong, with the
// numbers.
type Error struct {
	Reason Reason
	URL    string
	// Detail says what was wrong for the person who asked (the CLI prints
	// it): transport errors, excerpts of what the server sent.
	Detail string
	// Public says what was wrong in words and numbers of the reader's own,
	// never text the server sent: what Status shows to anyone who can read
	// a PDPair's status.
	Public string
}

func (e *Error) Error() string { return fmt.Sprintf("GET %s: %s: %s", e.URL, e.Reason, e.Detail) }

// Outcome is the reason as anyone may see it. Every failure to get an HTTP
// answer (refused, no route, no such host, a silent peer, a timeout, a
// peer that speaks something else than HTTP) is ReasonUnreachable: telling
// them apart would let whoever may create a PDPair scan the manager's
// network through its status.
func (e *Error) Outcome() Reason {
	if e.Reason == ReasonTimeout {
		return ReasonUnreachable
	}
	return e.Reason
}

// Status is the failure as a status may show it: the URL (made from the
// spec's address), the outcome and the reader's own words.
func (e *Error) Status() string {
	public := e.Public
	if public == "" {
		public = publicText[e.Outcome()]
	}
	return fmt.Sprintf("GET %s: %s: %s", e.URL, e.Outcome(), public)
}

// publicText is each outcome's fixed sentence, where an Error has no
// Public text of its own.
var publicText = map[Reason]string{
	ReasonBadAddress:  "not HOST:PORT",
	ReasonUnreachable: "no HTTP answer (refused, unresolvable, silent past the timeout, or not HTTP)",
	ReasonHTTPStatus:  "an answer other than 200",
	ReasonTooLarge:    "the answer is longer than the limit",
	ReasonMalformed:   "the answer does not decode",
	ReasonWrongWire:   "the server answers the v1 wire",
	ReasonNoContract:  "no contract registered yet",
	ReasonChanged:     "the contract changed between two reads",
	ReasonNotAllowed:  "the address is not in --bootstrap-address-allowlist",
}

// StatusOf is err as a status may show it: an *Error's Status, or err's
// text when err is not one (errors of the reader's own, e.g. the API
// server's).
func StatusOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Status()
	}
	return err.Error()
}

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
// no redirect and keeps no connection once a read ends: the manager reads
// each source every few seconds at most, and a connection left open to an
// address a PDPair no longer names would outlive the read.
func NewClient(timeout time.Duration) *Client {
	return newClient(timeout, nil)
}

// Restrict is a client like c whose requests reach only addresses policy
// allows (ReasonNotAllowed otherwise, before anything is sent). A DNS name
// that is not an allowed Service is resolved once and dialed at an allowed
// address it resolves to, so that the name cannot change between the check
// and the connection.
func (c *Client) Restrict(policy *AddressPolicy) *Client {
	if policy.Empty() {
		return c
	}
	return newClient(c.Timeout, policy)
}

func newClient(timeout time.Duration, policy *AddressPolicy) *Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{Timeout: timeout}
	dial := dialer.DialContext
	if !policy.Empty() {
		dial = policy.dialer(dialer)
	}
	return &Client{
		Timeout: timeout,
		http: &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			Transport: &http.Transport{
				Proxy:                  nil,
				DialContext:            dial,
				DisableKeepAlives:      true,
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
		return nil, &Error{Reason: ReasonTooLarge, URL: url, Detail: fmt.Sprintf("the answer is %d bytes (Content-Length); at most %d are read", resp.ContentLength, limit),
			Public: fmt.Sprintf("the answer is longer than %d bytes", limit)}
	}
	body, err := readBounded(resp.Body, resp.ContentLength, limit)
	switch {
	case err != nil && errors.Is(err, errTooLong):
		return nil, &Error{Reason: ReasonTooLarge, URL: url, Detail: fmt.Sprintf("the answer is longer than %d bytes; reading stopped there", limit),
			Public: fmt.Sprintf("the answer is longer than %d bytes; reading stopped there", limit)}
	case err != nil:
		return nil, c.transportError(url, err)
	case resp.StatusCode != http.StatusOK:
		return body, &Error{Reason: ReasonHTTPStatus, URL: url, Detail: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, Excerpt(body)),
			Public: fmt.Sprintf("HTTP %d", resp.StatusCode)}
	}
	return body, nil
}

func (c *Client) transportError(url string, err error) error {
	var ne net.Error
	if errors.Is(err, errNotAllowed) {
		return &Error{Reason: ReasonNotAllowed, URL: url, Detail: trimURL(err.Error(), url)}
	}
	public := fmt.Sprintf("no HTTP answer within %s (refused, unresolvable, silent or not HTTP)", c.Timeout)
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &Error{Reason: ReasonTimeout, URL: url, Detail: fmt.Sprintf("no whole answer within %s", c.Timeout), Public: public}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Reason: ReasonTimeout, URL: url, Detail: "cancelled before an answer", Public: "cancelled before an answer"}
	}
	return &Error{Reason: ReasonUnreachable, URL: url, Detail: trimURL(err.Error(), url), Public: public}
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

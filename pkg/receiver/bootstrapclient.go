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

package receiver

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
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
)

// maxBootstrapBody caps what is read from a bootstrap server: its answers
// are a few hundred bytes, or on the contract wire a contract of at most
// 256 KiB in a JSON string; a larger body is not one of them.
const maxBootstrapBody = kvcontract.MaxParallelInfoBytes

// bootstrapClient asks a prefill's bootstrap server for its parallel info,
// its ranks' addresses and its health, each call bounded by a timeout.
type bootstrapClient struct {
	http    *http.Client
	timeout time.Duration
}

func newBootstrapClient(c *http.Client, timeout time.Duration) *bootstrapClient {
	if c == nil {
		c = &http.Client{Transport: &http.Transport{
			Proxy:               nil, // bootstrap servers are reached directly, never through a proxy
			DialContext:         (&net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 8,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		}}
	}
	// A redirect would let whoever answers at a bootstrap address send the
	// agent anywhere (another host, another port); the reference servers
	// never redirect, so a 3xx is a failed call, as in the manager's client.
	// A caller's client is copied so its own setting is left alone.
	own := *c
	own.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &bootstrapClient{http: &own, timeout: timeout}
}

// bootstrapAnswer fetches the parallel info and tells its wire: a v1
// answer (item lengths) or a cache-contract one (cache_layout).
func (c *bootstrapClient) bootstrapAnswer(ctx context.Context, addr string) (bootstrapAnswer, error) {
	body, err := c.get(ctx, addr, kvwire.RoutePath+"?"+kvwire.ParallelInfoQuery)
	if err != nil {
		return bootstrapAnswer{}, err
	}
	return decodeBootstrapAnswer(body)
}

func (c *bootstrapClient) rankAddress(ctx context.Context, addr string, tpRank, dpGroup int) (kvwire.RankAddress, error) {
	body, err := c.get(ctx, addr, kvwire.RoutePath+"?"+kvwire.RankAddressQuery(tpRank, dpGroup))
	if err != nil {
		return kvwire.RankAddress{}, err
	}
	return kvwire.DecodeRankAddress(body)
}

func (c *bootstrapClient) health(ctx context.Context, addr string) error {
	_, err := c.get(ctx, addr, kvwire.HealthPath)
	return err
}

// get fetches http://addr+path and returns the body of a 200 answer; other
// answers become errors that quote the status and the start of the body.
func (c *bootstrapClient) get(ctx context.Context, addr, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	url := "http://" + addr + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("GET %s: no answer within %v", url, c.timeout)
		}
		return nil, fmt.Errorf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBootstrapBody+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("GET %s: reading the answer: %v", url, err)
	case len(body) > maxBootstrapBody:
		return nil, fmt.Errorf("GET %s: answer longer than %d bytes", url, maxBootstrapBody)
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, fmt.Errorf("GET %s: bootstrap server answered %s; redirects are not followed", url, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: status %d: %s", url, resp.StatusCode, excerpt(body))
	}
	return body, nil
}

func excerpt(b []byte) string {
	const limit = 120
	s := strings.TrimSpace(string(b))
	if len(s) > limit {
		s = s[:limit] + "…"
	}
	return strconv.Quote(s)
}

// checkBootstrapAddr refuses an address that would not form a URL.
func checkBootstrapAddr(addr string) error {
	if err := kvwire.CheckBootstrapAddress(addr); err != nil {
		return fmt.Errorf("bootstrap address %w", err)
	}
	return nil
}

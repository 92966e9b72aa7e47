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

package livecontract_test

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// A refused port, a name that does not resolve, a silent listener and one
// greeting with 3,000 bytes of a non-HTTP banner read alike in Status
// (Unreachable, the manager's words), whatever Error says to the CLI.
func TestStatusTellsTransportFailuresAlike(t *testing.T) {
	banner := strings.Repeat("SSH-2.0-hostile ", 200)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	_ = l.Close()
	c := livecontract.NewClient(300 * time.Millisecond)
	var want string
	for name, addr := range map[string]string{
		"refused": refused,
		"dns":     "missing.example.invalid:8998",
		"silent":  fixtures.SilentListener(t).Addr(),
		"banner":  fixtures.BannerListener(t, []byte(banner)).Addr(),
	} {
		_, err := c.Prefill(t.Context(), addr)
		var e *livecontract.Error
		if !errors.As(err, &e) || e.Outcome() != livecontract.ReasonUnreachable {
			t.Fatalf("%s: %v, want outcome Unreachable", name, err)
		}
		got := strings.ReplaceAll(e.Status(), addr, "ADDR")
		if want == "" {
			want = got
		}
		if got != want {
			t.Errorf("%s reads %q, another %q", name, got, want)
		}
		if strings.Contains(got, "SSH") || strings.Contains(got, "refused:") || strings.Contains(got, "no such host") || strings.Contains(got, "malformed") {
			t.Errorf("%s: Status says what the target sent or how: %q", name, got)
		}
	}
	t.Logf("every transport failure: %q", want)
}

// An answer that is not the bootstrap server's, or not 200, is named by
// its size or code alone.
func TestStatusQuotesNoAnswer(t *testing.T) {
	body := strings.Repeat("<secret/>", 400)
	for _, code := range []int{http.StatusOK, http.StatusForbidden} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
		}))
		_, err := livecontract.NewClient(time.Second).Prefill(t.Context(), srv.Listener.Addr().String())
		srv.Close()
		s := livecontract.StatusOf(err)
		if strings.Contains(s, "secret") || !strings.Contains(err.Error(), "secret") {
			t.Errorf("HTTP %d: Status %q, Error %.80q", code, s, err.Error())
		}
	}
}

// The allowlist: CIDRs, IPs and Services; a client restricted to it sends
// nothing to another address.
func TestAddressPolicy(t *testing.T) {
	p, err := livecontract.ParseAddressPolicy([]string{"10.0.0.0/8", "fd00::/8", "192.0.2.1", "llm/llama-prefill", "serving/*", ""})
	if err != nil {
		t.Fatal(err)
	}
	if p.String() != "10.0.0.0/8,fd00::/8,192.0.2.1/32,llm/llama-prefill,serving/*" {
		t.Errorf("policy %s", p)
	}
	for addr, allowed := range map[string]bool{
		"10.1.2.3:8998": true, "[fd00::1]:8998": true, "192.0.2.1:80": true, "192.0.2.2:80": false, "127.0.0.1:8998": false,
		"llama-prefill.llm:8998": true, "llama-prefill.llm.svc:8998": true, "llama-prefill.llm.svc.cluster.local:8998": true,
		"other.llm.svc:8998":     true, // resolved at dial time: allowed only where it resolves to 10/8 or fd00::/8
		"anything.serving.svc:1": true,
	} {
		if got := p.Check(addr) == nil; got != allowed {
			t.Errorf("Check(%s) allowed %v, want %v", addr, got, allowed)
		}
	}
	services, _ := livecontract.ParseAddressPolicy([]string{"llm/llama-prefill"})
	if services.Check("other.llm.svc:8998") == nil || services.Check("10.1.2.3:8998") == nil || !services.AllowsService("llama-prefill.llm.svc.") {
		t.Error("a policy of Services only allows other names or IPs")
	}
	for _, bad := range []string{"10.0.0.0/33", "LLM/x", "llm/", "just-a-name"} {
		if _, err := livecontract.ParseAddressPolicy([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if !p.AllowsIP(netip.MustParseAddr("::ffff:10.0.0.1")) {
		t.Error("an IPv4-mapped address in 10/8 refused")
	}

	silent := fixtures.SilentListener(t)
	loopback, _ := livecontract.ParseAddressPolicy([]string{"10.0.0.0/8"})
	_, err = livecontract.NewClient(time.Second).Restrict(loopback).Prefill(t.Context(), silent.Addr())
	if livecontract.ReasonOf(err) != livecontract.ReasonNotAllowed || !strings.Contains(livecontract.StatusOf(err), "--bootstrap-address-allowlist") {
		t.Fatalf("an address outside the allowlist: %v", err)
	}
	_, err = livecontract.NewClient(time.Second).Restrict(loopback).Prefill(t.Context(), "localhost:1")
	if livecontract.ReasonOf(err) != livecontract.ReasonNotAllowed {
		t.Fatalf("a name resolving outside the allowlist: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := silent.Accepted(); n != 0 {
		t.Errorf("the restricted client connected %d times to an address outside its allowlist", n)
	}
}

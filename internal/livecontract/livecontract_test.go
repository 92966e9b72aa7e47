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
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

func startPeer(t *testing.T, cfg prefillpeer.Config) *prefillpeer.Peer {
	t.Helper()
	p, err := prefillpeer.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func contractPeer(t *testing.T, v fixtures.ContractPair, mut func(*prefillpeer.Config)) *prefillpeer.Peer {
	cfg := prefillpeer.Config{Wire: kvwire.WireCacheContract, WorldSize: v.Prefill.TPSize, DPSize: v.Prefill.DPSize, Contract: v.PrefillContract}
	if mut != nil {
		mut(&cfg)
	}
	return startPeer(t, cfg)
}

// A contract-era prefill's bootstrap server gives its world, its DP groups
// and its contract as the engine re-encodes it.
func TestPrefillFromTheContractPeer(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	p := contractPeer(t, v, nil)
	got, err := livecontract.NewClient(0).Prefill(t.Context(), p.BootstrapAddr())
	if err != nil {
		t.Fatal(err)
	}
	want, err := plancontract.Parse(v.PrefillContract)
	if err != nil {
		t.Fatal(err)
	}
	if got.TPSize != 4 || got.DPSize != 1 || string(got.Contract) != string(want.Canonical()) || got.URL != livecontract.PrefillURL(p.BootstrapAddr()) {
		t.Fatalf("got TP %d DP %d from %s, contract %.80s…", got.TPSize, got.DPSize, got.URL, got.Contract)
	}
}

// hugeServer answers every request with n bytes of JSON-looking filler,
// declaring the length or not.
func hugeServer(t *testing.T, n int64, declared bool) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if declared {
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		}
		w.WriteHeader(http.StatusOK)
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for written := int64(0); written < n; written += int64(len(chunk)) {
			if _, err := w.Write(chunk[:min(int64(len(chunk)), n-written)]); err != nil {
				return // the client stopped reading
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// Every way a bootstrap server can fail to give a contract is an *Error
// with its reason and the numbers, within the timeout and the size cap.
func TestPrefillRefusals(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	const twoGiB = 2 << 30
	refused := func() string { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}
	for _, c := range []struct {
		name   string
		addr   func() string
		reason livecontract.Reason
		says   []string
	}{
		{"no rank registered yet", func() string {
			return contractPeer(t, v, func(c *prefillpeer.Config) { c.DeferRegistration = true }).BootstrapAddr()
		}, livecontract.ReasonNoContract, []string{"no prefill rank has registered"}},
		{"hangs", func() string {
			p := contractPeer(t, v, nil)
			p.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultHang})
			return p.BootstrapAddr()
		}, livecontract.ReasonTimeout, []string{"within 300ms"}},
		{"answers garbage", func() string {
			p := contractPeer(t, v, nil)
			p.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultGarbage})
			return p.BootstrapAddr()
		}, livecontract.ReasonMalformed, []string{"not a JSON object", "upstream proxy error"}},
		{"answers 500", func() string {
			p := contractPeer(t, v, nil)
			p.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.Fault500})
			return p.BootstrapAddr()
		}, livecontract.ReasonHTTPStatus, []string{"HTTP 500"}},
		{"answers the v1 wire", func() string {
			p := contractPeer(t, v, nil)
			p.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: prefillpeer.FaultOtherWire})
			return p.BootstrapAddr()
		}, livecontract.ReasonWrongWire, []string{"v1 wire", "prefill TP 4, DP 1"}},
		{"is a v1 prefill", func() string {
			return startPeer(t, prefillpeer.Config{WorldSize: 2, Buffers: kvv1.BufferLens{KVItemLens: []int64{64}}}).BootstrapAddr()
		}, livecontract.ReasonWrongWire, []string{"v1 wire", "prefill TP 2, DP 1, 1 KV item lengths"}},
		{"answers 2 GiB, saying so", func() string { return hugeServer(t, twoGiB, true) },
			livecontract.ReasonTooLarge, []string{"2147483648 bytes (Content-Length)", strconv.Itoa(livecontract.MaxPrefillAnswerBytes)}},
		{"answers 2 GiB, chunked", func() string { return hugeServer(t, twoGiB, false) },
			livecontract.ReasonTooLarge, []string{"longer than " + strconv.Itoa(livecontract.MaxPrefillAnswerBytes)}},
		{"does not listen", refused, livecontract.ReasonUnreachable, []string{"connection refused"}},
		{"is not HOST:PORT", func() string { return "prefill.llm.svc" }, livecontract.ReasonBadAddress, []string{`"prefill.llm.svc" is not HOST:PORT`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := c.addr()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			_, err := livecontract.NewClient(300*time.Millisecond).Prefill(context.Background(), addr)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if livecontract.ReasonOf(err) != c.reason {
				t.Fatalf("got %v, want reason %s", err, c.reason)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			if !strings.Contains(err.Error(), "GET http://"+addr+"/route?engine_rank=-1&target_dp_group=-1") {
				t.Errorf("%q does not name the URL", err)
			}
			// Bounded: what one read allocates is a few times the cap, however
			// much the server sends; and it ends with the timeout.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 8*livecontract.MaxPrefillAnswerBytes {
				t.Errorf("the read allocated %d bytes", grew)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("the read took %v with a 300ms timeout", d)
			}
		})
	}
}

// fixedPod is an agent's pod for the real probe handler: its engines'
// contracts by rank.
type fixedPod map[int][]byte

func (p fixedPod) Info() localapi.AgentInfo {
	return localapi.AgentInfo{Ranks: []int{0, 1}, EngineContracts: localapi.EngineContracts([]int{0, 1}, p.EngineContract)}
}
func (p fixedPod) Readiness() error               { return nil }
func (p fixedPod) EngineContract(rank int) []byte { return p[rank] }

// The agent's own probe handler and this client agree on the paths and the
// shapes: the contracts /v1/agent lists are the bytes /v1/agent/contract
// answers, and a rank without one is ReasonNoContract.
func TestAgentThroughTheProbeHandler(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	srv := httptest.NewServer(localapi.ProbeHandler(fixedPod{1: v.DecodeContract}, nil))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	c := livecontract.NewClient(0)
	a, err := c.Agent(t.Context(), addr)
	if err != nil || len(a.Contracts) != 1 || a.Contracts[0].Rank != 1 || a.Contracts[0].Bytes != len(v.DecodeContract) {
		t.Fatalf("%+v, %v", a, err)
	}
	got, err := c.AgentContract(t.Context(), addr, 1, a.Contracts[0].SHA256)
	if err != nil || string(got) != string(v.DecodeContract) {
		t.Fatalf("%.80s, %v", got, err)
	}
	if _, err := c.AgentContract(t.Context(), addr, 0, ""); livecontract.ReasonOf(err) != livecontract.ReasonNoContract || !strings.Contains(err.Error(), "rank 0") {
		t.Fatalf("rank 0: %v", err)
	}
}

// An agent that misreports: a SHA-256 other than its bytes', a size past
// the engine's limit, not an agent at all, a contract past 256 KiB.
func TestAgentRefusals(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	c := livecontract.NewClient(time.Second)

	a := fixtures.NewAgentProbe("")
	defer a.Close()
	a.SetContract(0, v.DecodeContract)
	a.Misreport(0, "sha256", strings.Repeat("ab", 32))
	info, err := c.Agent(t.Context(), a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.AgentContract(t.Context(), a.Addr(), 0, info.Contracts[0].SHA256); livecontract.ReasonOf(err) != livecontract.ReasonChanged ||
		!strings.Contains(err.Error(), "abababababab") || !strings.Contains(err.Error(), strconv.Itoa(len(v.DecodeContract))+" bytes") {
		t.Errorf("a misreported SHA-256: %v", err)
	}
	a.Misreport(0, "bytes", 300<<10)
	if _, err := c.Agent(t.Context(), a.Addr()); livecontract.ReasonOf(err) != livecontract.ReasonMalformed || !strings.Contains(err.Error(), "307200 bytes") {
		t.Errorf("a contract of 300 KiB reported: %v", err)
	}

	huge := fixtures.NewAgentProbe("")
	defer huge.Close()
	huge.SetContract(0, []byte(`{"x":"`+strings.Repeat("a", 300<<10)+`"}`))
	if _, err := c.AgentContract(t.Context(), huge.Addr(), 0, ""); livecontract.ReasonOf(err) != livecontract.ReasonTooLarge || !strings.Contains(err.Error(), strconv.Itoa(livecontract.MaxAgentContractBytes)) {
		t.Errorf("a contract of 300 KiB answered: %v", err)
	}

	notAgent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<html>hello</html>") }))
	defer notAgent.Close()
	if _, err := c.Agent(t.Context(), notAgent.Listener.Addr().String()); livecontract.ReasonOf(err) != livecontract.ReasonMalformed || !strings.Contains(err.Error(), "<html>hello") {
		t.Errorf("not an agent: %v", err)
	}
	if _, err := c.Agent(t.Context(), hugeServer(t, 2<<30, false)); livecontract.ReasonOf(err) != livecontract.ReasonTooLarge {
		t.Errorf("an agent answering 2 GiB: %v", err)
	}
}

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

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/announce"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// syncBuffer is an io.Writer the test can read while run writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut, nil); code != exitOK || !strings.Contains(out.String(), "Usage:") {
		t.Fatalf("--help: %d %q %q", code, out.String(), errOut.String())
	}
}

func TestUsageErrors(t *testing.T) {
	cases := map[string][]string{
		"no layout":         {},
		"unknown flag":      {"--tp", "2", "--nope"},
		"bad list":          {"--tp", "2", "--kv-item-lens", "2048,x"},
		"zero length":       {"--tp", "2", "--kv-item-lens", "0"},
		"bad behaviour":     {"--tp", "2", "--behavior", "explode"},
		"bad candidates":    {"--tp", "2", "--spec-candidates", "1,two"},
		"dp not dividing":   {"--tp", "4", "--dp", "3", "--bootstrap-port", "0"},
		"file and flags":    {"-f", "x.yaml", "--tp", "2"},
		"missing file":      {"-f", "/nonexistent/pdpair.yaml"},
		"stray argument":    {"--tp", "2", "extra"},
		"unpaired units":    {"--tp", "2", "--kv-item-lens", "2x2048", "--kv-unit-lens", "256", "--bootstrap-port", "0"},
		"negative delay":    {"--tp", "2", "--delay", "-1s"},
		"token below none":  {"--tp", "2", "--token", "-5"},
		"check without -f":  {"--tp", "2", "--kv-item-lens", "2048", "--check-transfers"},
		"contract and lens": {"--tp", "2", "--kv-item-lens", "2048", "--contract", "../../pkg/kvwire/testdata/contract/README.md"},
		"contract no tp":    {"--contract", "../../pkg/kvwire/testdata/contract/README.md"},
		"contract missing":  {"--tp", "2", "--contract", "/nonexistent/contract.json"},
		"contract invalid":  {"--tp", "2", "--contract", "../../pkg/kvwire/testdata/contract/README.md", "--bootstrap-port", "0"},
		"register and port": {"--tp", "2", "--kv-item-lens", "2048", "--register-with", "http://127.0.0.1:9", "--bootstrap-port", "0"},
		"register https":    {"--tp", "2", "--kv-item-lens", "2048", "--register-with", "https://127.0.0.1:9"},
		"register no port":  {"--tp", "2", "--kv-item-lens", "2048", "--register-with", "http://127.0.0.1"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(args, &out, &errOut, nil)
			if code == exitOK || errOut.Len() == 0 {
				t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
			}
		})
	}
}

// --check-transfers hands the peer both sides of the PDPair's layout.
func TestCheckTransfersTakesTheLayout(t *testing.T) {
	sample := "../../config/samples/pd_v1alpha1_pdpair_gqa_p8_d4_16_tokens.yaml"
	for _, check := range []bool{false, true} {
		args := []string{"-f", sample}
		if check {
			args = append(args, "--check-transfers")
		}
		var out, errOut bytes.Buffer
		opts, code := parseFlags(args, &out, &errOut)
		if code != -1 {
			t.Fatalf("%v: exit %d %q", args, code, errOut.String())
		}
		if got := opts.cfg.Transfer != nil; got != check {
			t.Fatalf("%v: transfer check %v", args, got)
		}
		if check && (opts.cfg.Transfer.TokensPerPage != 16 || opts.cfg.Transfer.Decode.TPSize != 4 || opts.cfg.Transfer.KVBuffers[0].DecodeItemBytes != 8192) {
			t.Fatalf("layout handed to the peer: %+v", *opts.cfg.Transfer)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := parseList("2x256, 1024")
	if err != nil || len(got) != 3 || got[0] != 256 || got[1] != 256 || got[2] != 1024 {
		t.Fatalf("%v %v", got, err)
	}
}

// TestServesUntilStopped runs the command for a PDPair manifest on a free
// port, checks the bootstrap server answers, and stops it with a signal.
func TestServesUntilStopped(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pair.yaml")
	manifest := `apiVersion: pd.pdtopo.dev/v1alpha1
kind: PDPair
metadata:
  name: demo
spec:
  prefill:
    tensorParallelSize: 4
  decode:
    tensorParallelSize: 2
  kvBuffers:
  - kind: TargetK
    count: 2
    decodeItemBytes: 512
    decodeUnitBytes: 256
    prefillUnitBytes: 256
  - kind: TargetV
    count: 2
    decodeItemBytes: 512
    decodeUnitBytes: 256
    prefillUnitBytes: 256
`
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	announced := filepath.Join(dir, "local-prefills")
	stop := make(chan os.Signal, 1)
	done := make(chan int)
	go func() {
		done <- run([]string{"-f", file, "--bootstrap-port", "0", "--token", "7", "--announce", announced}, stdout, stderr, stop)
	}()

	addr := testutil.EventuallyValue(t, 5*time.Second, "the bootstrap address printed", func() (string, error) {
		line, _ := bufio.NewReader(strings.NewReader(stdout.String())).ReadString('\n')
		if f := strings.Fields(line); len(f) > 1 && f[0] == "bootstrap" {
			return f[1], nil
		}
		return "", fmt.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	})
	resp, err := http.Get("http://" + addr + "/route?engine_rank=-1&target_dp_group=-1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `{"prefill_tp_size": 4, "prefill_dp_size": 1, "enable_mla_l1_5_cache": false, "kv_item_lens": [256, 256, 256, 256], "kv_unit_lens": [256, 256, 256, 256], "state_item_lens": [], "state_unit_lens": []}`
	if string(body) != want {
		t.Fatalf("parallel info %s, want %s", body, want)
	}
	// --announce: the address and both layouts, for make run.
	ins := testutil.EventuallyValue(t, 5*time.Second, "the announcement", func() ([]announce.Instance, error) {
		ins, err := announce.Read(announced)
		if err == nil && len(ins) != 1 {
			err = fmt.Errorf("%d announcements", len(ins))
		}
		return ins, err
	})
	_, port, _ := strings.Cut(addr, ":")
	if wantIn := (announce.Instance{Name: "p4-" + port, Bootstrap: addr, Prefill: "tp=4,dp=1", Decode: "tp=2,dp=1"}); ins[0] != wantIn {
		t.Errorf("announced %+v, want %+v", ins[0], wantIn)
	}
	stop <- os.Interrupt
	select {
	case code := <-done:
		if code != exitOK {
			t.Fatalf("exit %d; stderr %q", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not stop on interrupt")
	}
	if left, _ := os.ReadDir(announced); len(left) != 0 {
		t.Errorf("announcement left after the peer stopped: %v", left)
	}
	if out := stdout.String(); !strings.Contains(out, "engine rank 3 (dp group 0, tp rank 3): tcp://127.0.0.1:") || !strings.Contains(out, "engine rank 3: 0 registrations") {
		t.Fatalf("stdout %q", out)
	}
}

// --contract serves a contract-era prefill: the bootstrap answer carries
// the contract, as the engine re-encodes it.
func TestServesTheContractWire(t *testing.T) {
	b, err := os.ReadFile("../../pkg/kvwire/testdata/contract/gqa-p4-d2.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Prefill struct{ Contract string }
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "contract.json")
	if err := os.WriteFile(file, []byte(v.Prefill.Contract), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	stop := make(chan os.Signal, 1)
	done := make(chan int)
	go func() {
		done <- run([]string{"--tp", "4", "--contract", file, "--bootstrap-port", "0"}, stdout, stderr, stop)
	}()
	addr := testutil.EventuallyValue(t, 5*time.Second, "the bootstrap address printed", func() (string, error) {
		line, _ := bufio.NewReader(strings.NewReader(stdout.String())).ReadString('\n')
		if f := strings.Fields(line); len(f) > 1 && f[0] == "bootstrap" && strings.Contains(line, "cache-contract wire") {
			return f[1], nil
		}
		return "", fmt.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	})
	resp, err := http.Get("http://" + addr + "/route?engine_rank=-1&target_dp_group=-1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wire, _ := kvwire.AnswerWire(body)
	ans, err := kvcontract.DecodeParallelInfo(body)
	if err != nil || wire != kvwire.WireCacheContract || string(ans.CacheLayout) != v.Prefill.Contract || ans.PrefillTPSize != 4 {
		t.Fatalf("parallel info %.200s: %+v, %v", body, ans, err)
	}
	stop <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr.String())
	}
}

// --register-with: the ranks register with another bootstrap server (here
// test/prefillpeer's own), which then answers their addresses; the peer
// started again in the first one's place moves them to new ports there.
func TestRegistersWithAnotherServer(t *testing.T) {
	server, err := prefillpeer.Start(prefillpeer.Config{WorldSize: 2,
		Buffers: kvv1.BufferLens{KVItemLens: []int64{2048}, KVUnitLens: []int64{256}}})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	base := "http://" + server.BootstrapAddr()
	var last []string
	for round := range 2 {
		stdout, stderr := &syncBuffer{}, &syncBuffer{}
		stop := make(chan os.Signal, 1)
		done := make(chan int)
		go func() {
			done <- run([]string{"--tp", "2", "--kv-item-lens", "2048", "--kv-unit-lens", "256", "--register-with", base}, stdout, stderr, stop)
		}()
		endpoints := testutil.EventuallyValue(t, 5*time.Second, "the ranks' endpoints printed", func() ([]string, error) {
			var eps []string
			for _, line := range strings.Split(stdout.String(), "\n") {
				if f := strings.Fields(line); len(f) > 1 && f[0] == "bootstrap" && f[1] != server.BootstrapAddr() {
					return nil, fmt.Errorf("bootstrap %s printed, want the other server's %s", f[1], server.BootstrapAddr())
				}
				if _, ep, ok := strings.Cut(line, "): tcp://"); ok {
					eps = append(eps, ep)
				}
			}
			if len(eps) < 2 {
				return nil, fmt.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
			}
			return eps, nil
		})
		for r, ep := range endpoints {
			resp, err := http.Get(base + "/route?" + kvwire.RankAddressQuery(r, 0))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			host, port, _ := strings.Cut(ep, ":")
			if want := fmt.Sprintf(`{"rank_ip": %q, "rank_port": %s}`, host, port); string(body) != want {
				t.Errorf("round %d: the server answers rank %d at %s, want %s", round, r, body, want)
			}
			if last != nil && last[r] == ep {
				t.Errorf("round %d: rank %d came back at the same endpoint %s", round, r, ep)
			}
		}
		last = endpoints
		stop <- os.Interrupt
		if code := <-done; code != exitOK {
			t.Fatalf("exit %d; stderr %q", code, stderr.String())
		}
	}
	if n := server.BootstrapCounts().Puts; n != 6 { // its own 2, then 2 per round
		t.Errorf("the server took %d registrations, want 6", n)
	}
}

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
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

func startContractPeer(t *testing.T, v fixtures.ContractPair, wire kvwire.Wire) *prefillpeer.Peer {
	t.Helper()
	cfg := prefillpeer.Config{Wire: wire, WorldSize: v.Prefill.TPSize, DPSize: v.Prefill.DPSize, Contract: v.PrefillContract}
	if wire == kvwire.WireV1 {
		cfg.Contract, cfg.Buffers = nil, kvv1.BufferLens{KVItemLens: []int64{64, 64}}
	}
	p, err := prefillpeer.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// `contract --prefill` saves what a contract-era bootstrap server serves:
// raw (the bytes spec.cacheContracts takes inline), into a file whole, as
// JSON with where it came from, and as a ConfigMap to refer to.
func TestContractFromAPrefill(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	peer := startContractPeer(t, v, kvwire.WireCacheContract)
	want, err := plancontract.Parse(v.PrefillContract)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := pdtopo(t, "", "contract", "--prefill", peer.BootstrapAddr())
	if code != exitOK || out != string(want.Canonical()) {
		t.Fatalf("exit %d, %d bytes (%s), want the %d canonical bytes", code, len(out), errOut, len(want.Canonical()))
	}

	file := filepath.Join(t.TempDir(), "prefill.json")
	code, _, errOut = pdtopo(t, "", "contract", "--prefill", peer.BootstrapAddr(), "--file", file)
	got, _ := os.ReadFile(file)
	if code != exitOK || string(got) != string(want.Canonical()) || !strings.Contains(errOut, "wrote "+file+": the prefill contract from http://"+peer.BootstrapAddr()) {
		t.Fatalf("exit %d: %s; file holds %d bytes", code, errOut, len(got))
	}

	code, out, errOut = pdtopo(t, "", "contract", "--prefill", peer.BootstrapAddr(), "-o", "json")
	var js liveContract
	if err := json.Unmarshal([]byte(out), &js); code != exitOK || err != nil {
		t.Fatalf("exit %d: %s %v", code, errOut, err)
	}
	if js.Source != pdv1.ContractSourcePrefillBootstrap || js.TPSize != 4 || js.DPSize != 1 || js.SHA256 != want.SHA256() || js.Bytes != len(want.Canonical()) ||
		js.From != livecontract.PrefillURL(peer.BootstrapAddr()) || js.Rank != nil || js.Contract != string(want.Canonical()) {
		t.Errorf("-o json: %s %s TP %d DP %d %s, %d bytes", js.Source, js.From, js.TPSize, js.DPSize, js.SHA256, js.Bytes)
	}

	code, out, errOut = pdtopo(t, "", "contract", "--prefill", peer.BootstrapAddr(), "-o", "configmap", "-n", "llm", "--name", "llama-prefill", "--key", "p.json")
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal([]byte(out), &cm); code != exitOK || err != nil {
		t.Fatalf("exit %d: %s %v", code, errOut, err)
	}
	if cm.Kind != "ConfigMap" || cm.Name != "llama-prefill" || cm.Namespace != "llm" || cm.Data["p.json"] != string(want.Canonical()) ||
		!strings.Contains(out, "spec.cacheContracts.prefill.configMapKeyRef {name: llama-prefill, key: p.json}") {
		t.Errorf("-o configmap:\n%.300s", out)
	}
}

// `contract --agent` saves what a decode engine registered with its agent:
// the lowest rank that has one, or --rank's.
func TestContractFromAnAgent(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	other := fixtures.LoadContractPair(t, "gqa-p2-d4")
	agent := fixtures.NewAgentProbe("")
	defer agent.Close()
	agent.SetContract(3, other.DecodeContract)
	agent.SetContract(2, v.DecodeContract)

	code, out, errOut := pdtopo(t, "", "contract", "--agent", agent.Addr())
	if code != exitOK || out != string(v.DecodeContract) {
		t.Fatalf("exit %d (%s): %.80s", code, errOut, out)
	}
	code, out, errOut = pdtopo(t, "", "contract", "--agent", agent.Addr(), "--rank", "3", "-o", "json")
	var js liveContract
	if err := json.Unmarshal([]byte(out), &js); code != exitOK || err != nil || js.Rank == nil || *js.Rank != 3 || js.Source != pdv1.ContractSourceAgentRegistration ||
		js.From != livecontract.AgentContractURL(agent.Addr(), 3) || js.Contract != string(other.DecodeContract) {
		t.Fatalf("exit %d (%s): from %s rank %v, %d bytes, %v", code, errOut, js.From, js.Rank, len(js.Contract), err)
	}
	code, out, errOut = pdtopo(t, "", "contract", "--agent", agent.Addr(), "-o", "configmap")
	if code != exitOK || !strings.Contains(out, "name: decode-contract") || !strings.Contains(out, "contract.json:") {
		t.Fatalf("exit %d (%s):\n%s", code, errOut, out)
	}
}

// What goes wrong is said with the URL and the numbers, with the exit
// status of its kind; nothing is written.
func TestContractRefusals(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	faulty := func(f prefillpeer.Fault) string {
		p := startContractPeer(t, v, kvwire.WireCacheContract)
		p.SetBootstrapFault(prefillpeer.BootstrapFault{ParallelInfo: f})
		return p.BootstrapAddr()
	}
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat(" ", 64<<10))
		for range (2 << 30) / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer huge.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	agent := fixtures.NewAgentProbe("")
	defer agent.Close()
	agent.SetContract(0, v.DecodeContract)
	lying := fixtures.NewAgentProbe("")
	defer lying.Close()
	lying.SetContract(0, v.DecodeContract)
	lying.Misreport(0, "sha256", strings.Repeat("ab", 32))
	broken := fixtures.NewAgentProbe("")
	defer broken.Close()
	broken.SetContract(0, []byte(`{"plan":{"prefix_granularity":16}}`))

	for _, c := range []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"no source", nil, exitUsage, []string{"give exactly one of --prefill HOST:PORT and --agent HOST:PORT"}},
		{"two sources", []string{"--prefill", "a:1", "--agent", "b:2"}, exitUsage, []string{"exactly one"}},
		{"not HOST:PORT", []string{"--prefill", "prefill.llm.svc"}, exitUsage, []string{`--prefill: "prefill.llm.svc" is not HOST:PORT`}},
		{"an unknown format", []string{"--prefill", "a:1", "-o", "xml"}, exitUsage, []string{"-o must be one of raw, json, configmap"}},
		{"--rank of a prefill", []string{"--prefill", "a:1", "--rank", "1"}, exitUsage, []string{"--rank is a non-negative engine rank, with --agent only"}},
		{"a bad ConfigMap key", []string{"--prefill", "a:1", "-o", "configmap", "--key", "a/b"}, exitUsage, []string{`--key "a/b" is not a ConfigMap key`}},
		{"hangs", []string{"--prefill", faulty(prefillpeer.FaultHang), "--timeout", "300ms"}, exitCluster, []string{"Timeout: no whole answer within 300ms", "/route?engine_rank=-1"}},
		{"answers 2 GiB", []string{"--prefill", huge.Listener.Addr().String()}, exitCluster,
			[]string{"TooLarge: the answer is longer than " + strconv.Itoa(livecontract.MaxPrefillAnswerBytes) + " bytes"}},
		{"answers garbage", []string{"--prefill", faulty(prefillpeer.FaultGarbage)}, exitCluster, []string{"Malformed", "upstream proxy error"}},
		{"answers the v1 wire", []string{"--prefill", startContractPeer(t, v, kvwire.WireV1).BootstrapAddr()}, exitCluster,
			[]string{"WrongWire: the server answers the v1 wire (prefill TP 4, DP 1, 2 KV item lengths"}},
		{"does not listen", []string{"--prefill", refused}, exitCluster, []string{"Unreachable", "connection refused"}},
		{"a rank without a contract", []string{"--agent", agent.Addr(), "--rank", "5"}, exitCluster,
			[]string{"NoContract: the agent serves ranks [0]; engine rank 5 registered no contract"}},
		{"an agent whose bytes are not what it reported", []string{"--agent", lying.Addr()}, exitCluster, []string{"Changed", "abababababab"}},
		{"a contract the engine cannot decode", []string{"--agent", broken.Addr()}, exitUsage,
			[]string{"AgentRegistration (" + livecontract.AgentContractURL(broken.Addr(), 0) + ") gave a contract the engine cannot decode, not written"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "contract.json")
			code, out, errOut := pdtopo(t, "", append(append([]string{"contract"}, c.args...), "--file", file)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, errOut)
			}
			for _, s := range c.says {
				if !strings.Contains(errOut, s) {
					t.Errorf("%q does not say %q", errOut, s)
				}
			}
			if _, err := os.Stat(file); out != "" || !os.IsNotExist(err) {
				t.Errorf("something was written: stdout %q, file %v", out, err)
			}
		})
	}
}

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

package contract_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/contract"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	"github.com/pdtopo/pdtopo/test/clitest"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

// `contract --prefill` saves what a contract-era bootstrap server serves:
// raw (the bytes spec.cacheContracts takes inline), into a file whole, as
// JSON (or YAML) with where it came from, and as a ConfigMap to refer to.
func TestContractFromAPrefill(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	peer := clitest.StartContractPeer(t, v, kvwire.WireCacheContract)
	want, err := plancontract.Parse(v.PrefillContract)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := clitest.Run(t, "", "contract", "--prefill", peer.BootstrapAddr())
	if code != cli.ExitOK || out != string(want.Canonical()) {
		t.Fatalf("exit %d, %d bytes (%s), want the %d canonical bytes", code, len(out), errOut, len(want.Canonical()))
	}

	file := filepath.Join(t.TempDir(), "prefill.json")
	code, _, errOut = clitest.Run(t, "", "contract", "--prefill", peer.BootstrapAddr(), "--file", file)
	got, _ := os.ReadFile(file)
	if code != cli.ExitOK || string(got) != string(want.Canonical()) || !strings.Contains(errOut, "wrote "+file+": the prefill contract from http://"+peer.BootstrapAddr()) {
		t.Fatalf("exit %d: %s; file holds %d bytes", code, errOut, len(got))
	}

	code, out, errOut = clitest.Run(t, "", "contract", "--prefill", peer.BootstrapAddr(), "-o", "json")
	var js contract.LiveContract
	if err := json.Unmarshal([]byte(out), &js); code != cli.ExitOK || err != nil {
		t.Fatalf("exit %d: %s %v", code, errOut, err)
	}
	if js.Source != pdv1.ContractSourcePrefillBootstrap || js.TPSize != 4 || js.DPSize != 1 || js.SHA256 != want.SHA256() || js.Bytes != len(want.Canonical()) ||
		js.From != livecontract.PrefillURL(peer.BootstrapAddr()) || js.Rank != nil || js.Contract != string(want.Canonical()) {
		t.Errorf("-o json: %s %s TP %d DP %d %s, %d bytes", js.Source, js.From, js.TPSize, js.DPSize, js.SHA256, js.Bytes)
	}
	// -o yaml is the same document.
	code, out, errOut = clitest.Run(t, "", "contract", "--prefill", peer.BootstrapAddr(), "-o", "yaml")
	var ys contract.LiveContract
	if err := yaml.UnmarshalStrict([]byte(out), &ys); code != cli.ExitOK || err != nil || !reflect.DeepEqual(ys, js) {
		t.Errorf("-o yaml: exit %d: %s %v\n%+v\nwant %+v", code, errOut, err, ys, js)
	}

	code, out, errOut = clitest.Run(t, "", "contract", "--prefill", peer.BootstrapAddr(), "-o", "configmap", "-n", "llm", "--name", "llama-prefill", "--key", "p.json")
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal([]byte(out), &cm); code != cli.ExitOK || err != nil {
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

	code, out, errOut := clitest.Run(t, "", "contract", "--agent", agent.Addr())
	if code != cli.ExitOK || out != string(v.DecodeContract) {
		t.Fatalf("exit %d (%s): %.80s", code, errOut, out)
	}
	code, out, errOut = clitest.Run(t, "", "contract", "--agent", agent.Addr(), "--rank", "3", "-o", "json")
	var js contract.LiveContract
	if err := json.Unmarshal([]byte(out), &js); code != cli.ExitOK || err != nil || js.Rank == nil || *js.Rank != 3 || js.Source != pdv1.ContractSourceAgentRegistration ||
		js.From != livecontract.AgentContractURL(agent.Addr(), 3) || js.Contract != string(other.DecodeContract) {
		t.Fatalf("exit %d (%s): from %s rank %v, %d bytes, %v", code, errOut, js.From, js.Rank, len(js.Contract), err)
	}
	code, out, errOut = clitest.Run(t, "", "contract", "--agent", agent.Addr(), "-o", "configmap")
	if code != cli.ExitOK || !strings.Contains(out, "name: decode-contract") || !strings.Contains(out, "contract.json:") {
		t.Fatalf("exit %d (%s):\n%s", code, errOut, out)
	}
}

// What goes wrong is said with the URL and the numbers, with the exit
// status of its kind; nothing is written.
func TestContractRefusals(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	faulty := func(f prefillpeer.Fault) string {
		p := clitest.StartContractPeer(t, v, kvwire.WireCacheContract)
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
		{"no source", nil, cli.ExitUsage, []string{"give exactly one of --prefill HOST:PORT and --agent HOST:PORT"}},
		{"two sources", []string{"--prefill", "a:1", "--agent", "b:2"}, cli.ExitUsage, []string{"exactly one"}},
		{"not HOST:PORT", []string{"--prefill", "prefill.llm.svc"}, cli.ExitUsage, []string{`--prefill: "prefill.llm.svc" is not HOST:PORT`}},
		{"an unknown format", []string{"--prefill", "a:1", "-o", "xml"}, cli.ExitUsage, []string{"-o must be one of raw, json, yaml, configmap"}},
		{"--rank of a prefill", []string{"--prefill", "a:1", "--rank", "1"}, cli.ExitUsage, []string{"--rank is a non-negative engine rank, with --agent only"}},
		{"a bad ConfigMap key", []string{"--prefill", "a:1", "-o", "configmap", "--key", "a/b"}, cli.ExitUsage, []string{`--key "a/b" is not a ConfigMap key`}},
		{"hangs", []string{"--prefill", faulty(prefillpeer.FaultHang), "--timeout", "300ms"}, cli.ExitCluster, []string{"Timeout: no whole answer within 300ms", "/route?engine_rank=-1"}},
		{"answers 2 GiB", []string{"--prefill", huge.Listener.Addr().String()}, cli.ExitCluster,
			[]string{"TooLarge: the answer is longer than " + strconv.Itoa(livecontract.MaxPrefillAnswerBytes) + " bytes"}},
		{"answers garbage", []string{"--prefill", faulty(prefillpeer.FaultGarbage)}, cli.ExitCluster, []string{"Malformed", "upstream proxy error"}},
		{"answers the v1 wire", []string{"--prefill", clitest.StartContractPeer(t, v, kvwire.WireV1).BootstrapAddr()}, cli.ExitCluster,
			[]string{"WrongWire: the server answers the v1 wire (prefill TP 4, DP 1, 2 KV item lengths"}},
		{"does not listen", []string{"--prefill", refused}, cli.ExitCluster, []string{"Unreachable", "connection refused"}},
		{"a rank without a contract", []string{"--agent", agent.Addr(), "--rank", "5"}, cli.ExitCluster,
			[]string{"NoContract: the agent serves ranks [0]; engine rank 5 registered no contract"}},
		{"an agent whose bytes are not what it reported", []string{"--agent", lying.Addr()}, cli.ExitCluster, []string{"Changed", "abababababab"}},
		{"a contract the engine cannot decode", []string{"--agent", broken.Addr()}, cli.ExitUsage,
			[]string{"AgentRegistration (" + livecontract.AgentContractURL(broken.Addr(), 0) + ") gave a contract the engine cannot decode, not written"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "contract.json")
			code, out, errOut := clitest.Run(t, "", append(append([]string{"contract"}, c.args...), "--file", file)...)
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

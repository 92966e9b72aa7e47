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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// The probe address reports the contracts the pod's engines registered:
// /v1/agent names each rank's SHA-256 and size, /v1/agent/contract?rank=R
// answers the bytes; a rank without one, or not served, is 404
// NoEngineContract. What the operator reads for a PDPair that leaves the
// decode contract to the live engines.
func TestProbeReportsTheEngineContracts(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	var managers []*receiver.Manager
	for _, r := range []int{2, 3} {
		m, _ := receivertest.StartAgent(t, nil, r, nil)
		managers = append(managers, m)
	}
	contract := pair.DecodeContract
	eng := receivertest.ContractEngine(pair, 3)
	if err := managers[1].RegisterEngine(eng); err != nil {
		t.Fatal(err)
	}
	probe := httptest.NewServer(localapi.ProbeHandler(newPlanState([]int{2, 3}, managers, prometheus.NewRegistry()), nil))
	defer probe.Close()

	var info localapi.AgentInfo
	if err := json.Unmarshal(get(t, probe.URL+"/v1/agent", 200), &info); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(contract)
	want := []localapi.EngineContract{{Rank: 3, SHA256: hex.EncodeToString(sum[:]), Bytes: len(contract)}}
	if len(info.EngineContracts) != 1 || info.EngineContracts[0] != want[0] {
		t.Fatalf("/v1/agent engineContracts %+v, want %+v", info.EngineContracts, want)
	}
	if got := get(t, probe.URL+"/v1/agent/contract?rank=3", 200); string(got) != string(contract) {
		t.Fatalf("the contract of rank 3: %s", got)
	}
	for _, q := range []string{"rank=2", "rank=6"} {
		var e localapi.ErrorBody
		if err := json.Unmarshal(get(t, probe.URL+"/v1/agent/contract?"+q, 404), &e); err != nil || e.Error.Code != localapi.CodeNoEngineContract {
			t.Errorf("%s: %+v (%v)", q, e, err)
		}
	}
	get(t, probe.URL+"/v1/agent/contract?rank=x", 400)
	get(t, probe.URL+"/v1/agent/contract?rank=4&rank=3", 400)

	// A contract past the engine's 256 KiB is refused at registration: the
	// probe never answers more than that.
	eng.Contract = append([]byte(`{"x":"`), make([]byte, 256<<10)...)
	if err := managers[0].RegisterEngine(eng); err == nil {
		t.Fatal("a contract of 256 KiB and more was registered")
	}
}

func get(t *testing.T, url string, want int) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, body, want)
	}
	return body
}

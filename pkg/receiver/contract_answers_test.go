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

package receiver_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// A bootstrap server whose parallel-info answer a contract-era engine
// would refuse, or that is not the contract the engine decodes: the room
// fails with the reason and the numbers, and the server is never asked
// for a rank's address, so nothing is registered anywhere.
func TestContractBadBootstrapAnswers(t *testing.T) {
	pair := fixtures.LoadContractPair(t, "gqa-p4-d2")
	answer := func(layout string, extra ...string) string {
		b, _ := json.Marshal(layout)
		return `{"prefill_tp_size":4,"prefill_dp_size":1,"cache_layout":` + string(b) + strings.Join(extra, "") + `}`
	}
	contract := string(pair.PrefillContract)
	for _, tc := range []struct {
		name   string
		body   string
		reason receiver.FailureReason
		parts  []string
	}{
		{"an oversized contract", answer(`{"x":"` + strings.Repeat("a", 256<<10) + `"}`), receiver.ReasonParallelInfoUnavailable, []string{"PayloadSize", "262152 bytes", "1..262144"}},
		{"a contract that is not JSON", answer(`{"plan":`), receiver.ReasonParallelInfoUnavailable, []string{"MalformedJSON"}},
		{"an unknown key in a group", answer(strings.Replace(contract, `"page_count":48`, `"page_count":48,"colour":1`, 1)), receiver.ReasonParallelInfoUnavailable,
			[]string{"does not decode as the engine decodes a contract", "colour"}},
		{"an unknown key beside the contract", answer(contract, `,"note":1`), receiver.ReasonParallelInfoUnavailable, []string{"UnknownField", "note"}},
		{"v1 keys beside the contract", answer(contract, `,"kv_item_lens":[1]`), receiver.ReasonParallelInfoUnavailable, []string{"WireMismatch", "kv_item_lens"}},
		{"a null contract", `{"prefill_tp_size":4,"prefill_dp_size":1,"cache_layout":null}`, receiver.ReasonParallelInfoUnavailable, []string{"cache_layout"}},
		{"other sizes", strings.Replace(answer(contract), `"prefill_tp_size":4`, `"prefill_tp_size":8`, 1), receiver.ReasonLayoutMismatch,
			[]string{"prefill_tp_size is 8", "tensorParallelSize 4"}},
		{"an answer past the agent's bound", answer(contract, `,"pad":"`+strings.Repeat("a", 600<<10)+`"`), receiver.ReasonParallelInfoUnavailable, []string{"answer longer than"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ranks atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Get("engine_rank") != "-1" {
					ranks.Add(1)
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			snap, err := receiver.SnapshotFor(pair.Plan(t), 0)
			if err != nil {
				t.Fatal(err)
			}
			m, _ := receivertest.StartAgent(t, &snap, 0, nil)
			if err := m.RegisterEngine(receivertest.ContractEngine(pair, 0)); err != nil {
				t.Fatal(err)
			}
			if err := m.Open(strings.TrimPrefix(srv.URL, "http://"), 1); err != nil {
				t.Fatal(err)
			}
			st := receivertest.WaitStatus(t, m, 1, receiver.TransferPoll.Finished)
			if st.Status != receiver.Failed || st.Failure.Reason != tc.reason {
				t.Fatalf("room 1: %s (%v), want Failed with %s", st.Status, st.Failure, tc.reason)
			}
			for _, p := range tc.parts {
				if !strings.Contains(st.Failure.Message, p) {
					t.Fatalf("%q does not say %q", st.Failure.Message, p)
				}
			}
			if n := ranks.Load(); n != 0 {
				t.Fatalf("the agent asked for %d rank addresses of a prefill it refused", n)
			}
		})
	}
}

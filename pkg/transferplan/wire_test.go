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

package transferplan

import (
	"encoding/json"
	"strings"
	"testing"
)

// A record on a wire whose package is not linked in cannot be written, and
// its summary says so instead of guessing a page cost; a record naming a
// wire the vocabulary does not know is refused on reading.
func TestRecordOfAWireWithoutRules(t *testing.T) {
	r := LayoutRecord{Wire: "Carrier pigeon", Prefill: Parallelism{TPSize: 2, DPSize: 1}}
	if _, err := json.Marshal(r); err == nil || !strings.Contains(err.Error(), "has no rules") {
		t.Errorf("marshal: %v, want a refusal naming the missing rules", err)
	}
	z := NewSummarizer(r)
	z.Add(&RoutePlan{Targets: []PlanTarget{{PrefillTPRank: 1}}})
	if s := z.Summary(); s.FragmentsPerPage != 0 || !strings.Contains(s.PageCost, "has no rules") || s.PrefillFanOut[1] != 1 {
		t.Errorf("summary %+v", s)
	}
	var back LayoutRecord
	if err := json.Unmarshal([]byte(`{"wire":"Carrier pigeon"}`), &back); err == nil || !strings.Contains(err.Error(), "unknown wire") {
		t.Errorf("unmarshal: %v, want unknown wire", err)
	}
	if !Wire("").Known() || Wire("").OrV1() != WireV1 || Wire("x").Known() {
		t.Error("an empty wire is v1, and only the listed wires are known")
	}
}

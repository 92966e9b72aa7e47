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

package localcp

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

func pair(name string, generation int64, prefillTP, decodeTP, decodeDP int32, conds ...metav1.Condition) pdv1.PDPair {
	return *fixtures.Pair("default", name).Generation(generation).PrefillTP(prefillTP).Decode(decodeTP, decodeDP).Conditions(conds...).Obj()
}

func cond(t pdv1.PDPairConditionType, status metav1.ConditionStatus, reason pdv1.PDPairConditionReason, msg string, gen int64) metav1.Condition {
	return metav1.Condition{Type: string(t), Status: status, Reason: string(reason), Message: msg, ObservedGeneration: gen}
}

func TestWriteTableShowsConditionsAndWhyNotReady(t *testing.T) {
	ready := pair("gqa-p8-d4", 1, 8, 4, 1,
		cond(pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible, "", 1),
		cond(pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished, "", 1),
		cond(pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady, "", 1))
	ready.Status.Plan = &pdv1.PlanSummary{Kind: "fragmented"}
	broken := pair("fp8-prefill", 3, 8, 16, 8,
		cond(pdv1.PDPairLayoutCompatible, metav1.ConditionFalse, pdv1.ReasonUnitSizeMismatch, "kvBuffers[0] (TargetK) buffer 0: prefill unit is 128 bytes,\n decode unit 256 bytes", 2),
		cond(pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonLayoutIncompatible, "withdrawn", 2),
		cond(pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonLayoutIncompatible, "", 2))
	fresh := pair("new", 1, 2, 2, 1)

	var b strings.Builder
	if err := WriteTable(&b, []pdv1.PDPair{fresh, broken, ready}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	want := [][]string{
		{"NAMESPACE", "NAME", "PREFILL", "TP/DP", "DECODE", "TP/DP", "PLAN", "COMPATIBLE", "PUBLISHED", "READY"},
		// Sorted by name; "*" marks conditions of an older generation.
		{"default", "fp8-prefill", "8/1", "16/8", "-", "False*", "False*", "False*"},
		{"default", "gqa-p8-d4", "8/1", "4/1", "fragmented", "True", "True", "True"},
		{"default", "new", "2/1", "2/1", "-", "-", "-", "-"},
	}
	if len(lines) != 6 {
		t.Fatalf("want 4 rows and 2 notes, got:\n%s", b.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(w, " ") {
			t.Errorf("row %d = %q, want %q", i, got, w)
		}
	}
	// Messages are folded onto one line under the table.
	if want := "  default/fp8-prefill: LayoutCompatible UnitSizeMismatch: kvBuffers[0] (TargetK) buffer 0: prefill unit is 128 bytes, decode unit 256 bytes"; lines[4] != want {
		t.Errorf("note = %q\nwant   %q", lines[4], want)
	}
	if !strings.Contains(lines[5], "default/new: waiting for the manager") {
		t.Errorf("note = %q, want the pair without status to be waiting for the manager", lines[5])
	}
}

func TestWriteTableSaysWhenThereAreNoPairs(t *testing.T) {
	var b strings.Builder
	if err := WriteTable(&b, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(no PDPairs)") {
		t.Errorf("got %q", b.String())
	}
}

func TestShortenBoundsLongMessages(t *testing.T) {
	long := strings.Repeat("2 × 8 → ", 100)
	if got := shorten(long); len([]rune(got)) != maxMessage {
		t.Errorf("shortened to %d runes, want %d", len([]rune(got)), maxMessage)
	}
}

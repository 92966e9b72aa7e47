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

package v1

import (
	"fmt"
	"slices"
	"strings"

	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// checkLayout compares a prefill's live parallel info (the bootstrap
// server's answer to GET /route?engine_rank=-1&target_dp_group=-1; empty
// lists mean "not reported") with the layout a
// plan was made for, resolving unreported lists the way the reference
// decode does (item: decode item × D / P; unit: 1), since that is what the
// reference would have planned with. It returns nil or one sentence listing
// every difference with both values.
func checkLayout(info *kvv1.ParallelInfo, rec transferplan.LayoutRecord) error {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if info.PrefillTPSize != rec.Prefill.TPSize {
		add("prefill_tp_size is %d, the plan was made for prefill tensorParallelSize %d", info.PrefillTPSize, rec.Prefill.TPSize)
	}
	if info.PrefillDPSize != rec.Prefill.DPSize {
		add("prefill_dp_size is %d, the plan was made for prefill dataParallelSize %d", info.PrefillDPSize, rec.Prefill.DPSize)
	}
	if info.EnableMLAL15Cache != rec.MLAL15Cache {
		add("enable_mla_l1_5_cache is %t, the plan was made for mlaL15Cache %t", info.EnableMLAL15Cache, rec.MLAL15Cache)
	}
	if len(diffs) == 0 { // lens defaults depend on the TP sizes matching
		P, D := rec.Prefill.TPPerDP(), rec.Decode.TPPerDP()
		compareLens(add, "kv_item_lens", "prefillKVItemLens", info.KVItemLens, defaultItems(rec.DecodeKVItemLens, D, P), rec.PrefillKVItemLens)
		compareLens(add, "kv_unit_lens", "prefillKVUnitLens", info.KVUnitLens, ones(len(rec.DecodeKVItemLens)), rec.PrefillKVUnitLens)
		compareLens(add, "state_item_lens", "prefillStateItemLens", info.StateItemLens, defaultItems(rec.DecodeStateItemLens, D, P), rec.PrefillStateItemLens)
		compareLens(add, "state_unit_lens", "prefillStateUnitLens", info.StateUnitLens, ones(len(rec.DecodeStateItemLens)), rec.PrefillStateUnitLens)
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(diffs, "; "))
}

// compareLens compares one reported list (or, when unreported, the default
// the reference would assume) with the plan's list.
func compareLens(add func(string, ...any), wire, field string, reported, fallback, planned []int64) {
	got, how := reported, "is"
	if len(reported) == 0 {
		got, how = fallback, "is not reported, so the reference assumes"
	}
	if slices.Equal(got, planned) {
		return
	}
	if len(got) != len(planned) {
		add("%s %s %d buffers, the plan has %d in %s", wire, how, len(got), len(planned), field)
		return
	}
	i := firstDiff(got, planned)
	add("%s %s %d at buffer %d, the plan was made for %s[%d] = %d", wire, how, got[i], i, field, i, planned[i])
}

func firstDiff(a, b []int64) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return 0
}

func defaultItems(decode []int64, D, P int) []int64 {
	out := make([]int64, len(decode))
	for i, d := range decode {
		out[i] = planv1.DefaultPrefillItemBytes(d, D, P)
	}
	return out
}

func ones(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

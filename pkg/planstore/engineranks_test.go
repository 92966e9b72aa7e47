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

package planstore

import (
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// A pod's engine ranks map to decode TP ranks through the decode DP
// groups, in the order asked, from one publication.
func TestLoadEngineRanksMapsEveryRankOfAPod(t *testing.T) {
	l := kvLayout(8, 8, 2, 128, 128, 128)
	l.Decode = transferplan.Parallelism{TPSize: 8, DPSize: 2} // 4 TP ranks per DP group
	set := mustPlan(t, l)
	objs := mustEncode(t, "pair", set)
	got, err := LoadEngineRanks(objs, []int{3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	var tp []int
	for _, p := range got.Plans {
		tp = append(tp, p.DecodeTPRank)
	}
	if got.PDPair != "pair" || got.PlanHash != set.Hash() || len(tp) != 3 || tp[0] != 3 || tp[1] != 0 || tp[2] != 1 {
		t.Fatalf("engine ranks 3, 4, 5 (decode DP 2 of TP 4): %q %s decode TP ranks %v, want 3 0 1", got.PDPair, got.PlanHash, tp)
	}
	_, err = LoadEngineRanks(objs, []int{6, 7, 8, 9})
	if fe, ok := err.(*FormatError); !ok || fe.Reason != ReasonRankOutOfRange || !strings.Contains(err.Error(), "engine rank 8 is outside the decode fleet of 8 ranks") || !strings.Contains(err.Error(), "engine ranks 6..9") {
		t.Fatalf("engine ranks 6..9 of 8: %v", err)
	}
}

// Loading the 8 ranks of one pod from the largest publication the format
// is sized for (1024 decode ranks, 400 buffers, several shards).
func BenchmarkLoadEngineRanks8Of1024(b *testing.B) {
	objs := mustEncode(b, "big", p512D1024(b))
	ranks := []int{768, 769, 770, 771, 772, 773, 774, 775}
	for b.Loop() {
		if _, err := LoadEngineRanks(objs, ranks); err != nil {
			b.Fatal(err)
		}
	}
}

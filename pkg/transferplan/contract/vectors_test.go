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

package contract

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// The vectors under testdata/contract were computed by the engine itself
// (conformance/tokenspeed/contractplan, see testdata/contract/README.md);
// these tests hold pdtopo's decoder and planner to them.

// pairVector is one contract pair and what the engine made of it.
type pairVector struct {
	Name            string                   `json:"name"`
	Prefill         transferplan.Parallelism `json:"prefill"`
	Decode          transferplan.Parallelism `json:"decode"`
	PrefillContract string                   `json:"prefillContract"`
	DecodeContract  string                   `json:"decodeContract"`
	Engine          struct {
		Accepted                 bool             `json:"accepted"`
		Error                    string           `json:"error"`
		Message                  string           `json:"message"`
		DecodeRanksByPrefillRank map[string][]int `json:"decodeRanksByPrefillRank"`
		Ranks                    []struct {
			DecodeTPRank       int                                        `json:"decodeTPRank"`
			TargetPrefillRanks []int                                      `json:"targetPrefillRanks"`
			DummyPrefillRanks  []int                                      `json:"dummyPrefillRanks"`
			Fragments          map[string][]transferplan.ContractFragment `json:"fragments"`
		} `json:"ranks"`
	} `json:"engine"`
	Frames []struct {
		DecodeTPRank   int       `json:"decodeTPRank"`
		PrefillTPRank  int       `json:"prefillTPRank"`
		IsDummy        bool      `json:"isDummy"`
		Registration   []*string `json:"registration"`
		Preallocation  []string  `json:"preallocation"`
		PrefillVerdict struct {
			Kind                string                          `json:"kind"`
			ExpectedDecodeRanks []int                           `json:"expectedDecodeRanks"`
			Fragments           []transferplan.ContractFragment `json:"fragments"`
		} `json:"prefillVerdict"`
	} `json:"frames"`
}

func readGzipJSON(t testing.TB, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	if err := json.NewDecoder(r).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func goldenPairVectors(t *testing.T) []pairVector {
	t.Helper()
	files, err := filepath.Glob("../testdata/contract/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 12 {
		t.Fatalf("found %d pair vectors under testdata/contract, want at least 12", len(files))
	}
	var out []pairVector
	for _, f := range files {
		var v pairVector
		readGzipJSON(t, f, &v)
		out = append(out, v)
	}
	return out
}

// engineReasons maps the engine's refusal messages to pdtopo's reasons.
var engineReasons = []struct {
	fragment string
	reason   transferplan.Reason
}{
	{"contract mismatch: prefix_granularity", transferplan.ReasonContractMismatchPrefixGranularity},
	{"contract mismatch: group order", transferplan.ReasonContractMismatchGroupOrder},
	{"transfer field order", transferplan.ReasonContractMismatchFieldOrder},
	{"' semantics", transferplan.ReasonContractMismatchFieldSemantics}, // "field 'x' semantics" or "group 'x' semantics": refined below
	{"equal-TP Paged cache field", transferplan.ReasonContractMismatchRankGeometry},
	{"cannot map global extent", transferplan.ReasonContractShardsNotDividingTP},
	{"TP sizes cannot exceed", transferplan.ReasonContractTPOutOfRange},
	{"TP sizes must be positive", transferplan.ReasonContractTPOutOfRange},
	{"has no source fragments", transferplan.ReasonContractNoSourceFragments},
}

func engineReason(t testing.TB, message string) transferplan.Reason {
	t.Helper()
	if strings.Contains(message, "contract mismatch: group '") && strings.HasSuffix(message, "semantics") {
		return transferplan.ReasonContractMismatchGroupSemantics
	}
	for _, e := range engineReasons {
		if strings.Contains(message, e.fragment) {
			return e.reason
		}
	}
	t.Fatalf("no pdtopo reason for the engine's refusal %q", message)
	return ""
}

// checkPairVector plans a vector's pair with pdtopo and compares the
// verdict, the plans and the prefill's view of each registration with the
// engine's.
func checkPairVector(t *testing.T, v pairVector) {
	t.Helper()
	if set := checkPairVectorPlans(t, v); set != nil {
		checkFrameVerdicts(t, v, set)
	}
}

// checkPairVectorPlans compares the verdict and the plans; it returns the
// plans when both plan the pair.
func checkPairVectorPlans(t *testing.T, v pairVector) *transferplan.PlanSet {
	t.Helper()
	pre, err := Parse([]byte(v.PrefillContract))
	if err != nil {
		t.Fatalf("prefill contract: %v", err)
	}
	dec, err := Parse([]byte(v.DecodeContract))
	if err != nil {
		t.Fatalf("decode contract: %v", err)
	}
	if string(pre.Canonical()) != v.PrefillContract || string(dec.Canonical()) != v.DecodeContract {
		t.Errorf("re-encoding a canonical contract changed it:\n got %s\nwant %s", pre.Canonical(), v.PrefillContract)
	}
	pair := Pair{Prefill: v.Prefill, Decode: v.Decode, PrefillContract: pre, DecodeContract: dec}
	set, err := Plan(pair)
	if !v.Engine.Accepted {
		var le *transferplan.LayoutError
		if !errors.As(err, &le) {
			t.Fatalf("the engine refuses the pair (%s: %s); pdtopo planned it (err %v)", v.Engine.Error, v.Engine.Message, err)
		}
		if want := engineReason(t, v.Engine.Message); le.Reason != want {
			t.Errorf("reason %s (%s), want %s for the engine's %q", le.Reason, le.Message, want, v.Engine.Message)
		}
		checkEndsWithFix(t, le)
		return nil
	}
	if err != nil {
		t.Fatalf("the engine plans the pair; pdtopo refuses it: %v", err)
	}
	if len(set.Plans) != len(v.Engine.Ranks) {
		t.Fatalf("%d plans, the engine has %d decode ranks", len(set.Plans), len(v.Engine.Ranks))
	}
	fan := map[int]int{}
	for r, ds := range v.Engine.DecodeRanksByPrefillRank {
		n, _ := strconv.Atoi(r)
		fan[n] = len(ds)
	}
	for i, want := range v.Engine.Ranks {
		got := set.Plans[i]
		var real, dummies []int
		gotFrags := map[string][]transferplan.ContractFragment{}
		for _, tg := range got.Targets {
			if tg.IsDummy {
				dummies = append(dummies, tg.PrefillTPRank)
				if tg.RequiredDstInfoNum != 1 || len(tg.ContractFragments) != 0 {
					t.Errorf("rank %d: dummy target %d has fan-out %d and %d fragments, want 1 and 0", i, tg.PrefillTPRank, tg.RequiredDstInfoNum, len(tg.ContractFragments))
				}
				continue
			}
			real = append(real, tg.PrefillTPRank)
			gotFrags[strconv.Itoa(tg.PrefillTPRank)] = orEmpty(tg.ContractFragments)
			if tg.RequiredDstInfoNum != fan[tg.PrefillTPRank] {
				t.Errorf("rank %d: target %d fan-out %d, the engine's decode_ranks_by_prefill_rank has %d", i, tg.PrefillTPRank, tg.RequiredDstInfoNum, fan[tg.PrefillTPRank])
			}
		}
		if !reflect.DeepEqual(orEmptyInts(real), orEmptyInts(want.TargetPrefillRanks)) || !reflect.DeepEqual(orEmptyInts(dummies), orEmptyInts(want.DummyPrefillRanks)) {
			t.Errorf("rank %d: sources %v dummies %v, the engine's %v and %v", i, real, dummies, want.TargetPrefillRanks, want.DummyPrefillRanks)
		}
		if got.RequiredPrefillResponseNum != len(want.TargetPrefillRanks) {
			t.Errorf("rank %d: %d responses required, the engine expects %d ranks", i, got.RequiredPrefillResponseNum, len(want.TargetPrefillRanks))
		}
		for r, fs := range want.Fragments {
			want.Fragments[r] = orEmpty(fs)
		}
		if !reflect.DeepEqual(gotFrags, want.Fragments) {
			t.Errorf("rank %d fragments differ from the engine's:\n got %+v\nwant %+v", i, gotFrags, want.Fragments)
		}
	}
	return set
}

// checkFrameVerdicts compares each target of the plans with what the
// engine's prefill made of that rank's registration.
func checkFrameVerdicts(t *testing.T, v pairVector, set *transferplan.PlanSet) {
	t.Helper()
	if len(v.Frames) == 0 {
		t.Fatal("the vector has no frames")
	}
	for _, f := range v.Frames {
		var target *transferplan.PlanTarget
		for i := range set.Plans[f.DecodeTPRank].Targets {
			if tg := &set.Plans[f.DecodeTPRank].Targets[i]; tg.PrefillTPRank == f.PrefillTPRank {
				target = tg
			}
		}
		if target == nil {
			t.Errorf("decode rank %d registers with prefill rank %d, which its plan does not name", f.DecodeTPRank, f.PrefillTPRank)
			continue
		}
		want := map[bool]string{true: "dummy", false: "source"}[target.IsDummy]
		if f.PrefillVerdict.Kind != want || len(f.PrefillVerdict.ExpectedDecodeRanks) != target.RequiredDstInfoNum {
			t.Errorf("decode rank %d → prefill rank %d: the prefill takes the registration as %s expecting %d decode ranks; the plan says %s with fan-out %d",
				f.DecodeTPRank, f.PrefillTPRank, f.PrefillVerdict.Kind, len(f.PrefillVerdict.ExpectedDecodeRanks), want, target.RequiredDstInfoNum)
		}
		if !reflect.DeepEqual(orEmpty(f.PrefillVerdict.Fragments), orEmpty(target.ContractFragments)) {
			t.Errorf("decode rank %d → prefill rank %d: the prefill plans other fragments than the published plan", f.DecodeTPRank, f.PrefillTPRank)
		}
		if len(f.Registration) != 8 || len(f.Preallocation) != 3 || (f.Preallocation[2] == "") != f.IsDummy {
			t.Errorf("decode rank %d → prefill rank %d: %d registration and %d pre-allocation frames (dummy %v, manifest frame %q)",
				f.DecodeTPRank, f.PrefillTPRank, len(f.Registration), len(f.Preallocation), f.IsDummy, f.Preallocation[2])
		}
	}
}

func orEmpty(fs []transferplan.ContractFragment) []transferplan.ContractFragment {
	if fs == nil {
		return []transferplan.ContractFragment{}
	}
	return fs
}

func orEmptyInts(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}

func TestContractPlannerAgreesWithEngineVectors(t *testing.T) {
	for _, v := range goldenPairVectors(t) {
		t.Run(v.Name, func(t *testing.T) { checkPairVector(t, v) })
	}
}

// checkEndsWithFix holds a refusal to the house rule: it ends with its fix.
func checkEndsWithFix(t testing.TB, le *transferplan.LayoutError) {
	t.Helper()
	if le.Fix == "" || !strings.HasSuffix(le.Message, ". Fix: "+le.Fix) {
		t.Errorf("%s refusal without a fix at the end: %q", le.Reason, le.Message)
	}
}

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
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// A publication may hold several plan sets: during a rollout, instances of
// the old and the new layout of a role serve side by side, and a decode
// agent needs the plans of every (prefill layout, decode layout) pair still
// in use. Older agents decode index.json strictly (an unknown key is an
// error) and know format versions 1 and 2 only, so index.json stays what it
// always was, the current set alone, byte for byte; every set, the current
// one first, is listed in a second key of the index ConfigMap, SetsKey,
// which only agents that know it read. Its rank keys (SetRankKey) live in
// the same shard ConfigMaps as the current set's, so decode pods project
// the same names.

// SetsKey is the data key, in the index ConfigMap, of the sets index.
const SetsKey = "plansets.json"

// SetsFormatVersion is the version of the sets index this package writes
// and reads.
const SetsFormatVersion = 1

// MaxPlanSets is the most plan sets one publication holds; a sets index
// listing more is refused. A PDPair lists at most 4 generations
// (status.generations), and a rollout's cross pairs are those of each
// older generation with the current one, at most 2 each: 4 + 3×2 = 10
// layout pairs, so the count alone never leaves out a pair in use; the
// shard budget (all sets share the 32 shard names) still may.
const MaxPlanSets = 10

// SetsIndex is the content of the index ConfigMap's "plansets.json".
type SetsIndex struct {
	FormatVersion int    `json:"formatVersion"`
	PDPair        string `json:"pdpair"`
	// Sets are the plan sets published, each as its own index would be
	// with the keys SetRankKey gives it; Sets[0] is the current set, the
	// one index.json describes (status.plan.hash).
	Sets []Index `json:"sets"`
}

// SetRankKey is the key of a decode rank's plan in set s of a
// publication: the current set's (s = 0) are RankKey's, so that index.json
// names them for older agents.
func SetRankKey(s, rank int) string {
	if s == 0 {
		return RankKey(rank)
	}
	return fmt.Sprintf("set%d-%s", s, RankKey(rank))
}

// decodeSetsIndex decodes and checks a sets index's bytes.
func decodeSetsIndex(raw []byte) (*SetsIndex, error) {
	var si SetsIndex
	if err := decodeStrict(raw, &si); err != nil {
		return nil, formatErrorf(ReasonMalformedIndex, "%s: %v", SetsKey, err)
	}
	if si.FormatVersion != SetsFormatVersion {
		return nil, formatErrorf(ReasonUnsupportedVersion, "%s has formatVersion %d; this agent reads %d", SetsKey, si.FormatVersion, SetsFormatVersion)
	}
	if n := len(si.Sets); n < 1 || n > MaxPlanSets {
		return nil, setsMalformed("it lists %d plan sets; a publication holds 1..%d", n, MaxPlanSets)
	}
	seen := map[string]int{}
	for s := range si.Sets {
		idx := &si.Sets[s]
		if idx.PDPair != si.PDPair {
			return nil, setsMalformed("set %d is for PDPair %q, the sets index for %q", s, idx.PDPair, si.PDPair)
		}
		if err := idx.checkKeys(func(rank int) string { return SetRankKey(s, rank) }); err != nil {
			return nil, inSet(s, err)
		}
		if err := idx.checkRankBudget(); err != nil {
			return nil, inSet(s, err)
		}
		key := AnswerKey(idx.Layout)
		if first, dup := seen[key]; dup {
			return nil, setsMalformed("sets %d and %d are for decode layout %s and prefills that answer alike (%s); an agent could not tell them apart",
				first, s, DescribeParallelism(idx.Layout.Decode), DescribePrefill(idx.Layout))
		}
		seen[key] = s
	}
	return &si, nil
}

// inSet says which set of the sets index an index check refused.
func inSet(s int, err error) error {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return err
	}
	return formatErrorf(fe.Reason, "%s set %d: %s", SetsKey, s, strings.TrimPrefix(fe.Message, IndexKey+": "))
}

func setsMalformed(format string, args ...any) *FormatError {
	return formatErrorf(ReasonMalformedIndex, SetsKey+": "+format, args...)
}

// answerKey is what tells plan sets apart for an agent: its own decode
// layout and what a prefill's bootstrap server answers (v1: TP, DP, the
// MLA L1.5 flag, item and unit lengths; the contract wire: the prefill's
// parallelism and its contract's hash). Two sets with the same key are one
// to an agent: two generations that answer alike share a plan.
type answerKey struct {
	Wire        transferplan.Wire        `json:"w"`
	Decode      transferplan.Parallelism `json:"d"`
	Prefill     transferplan.Parallelism `json:"p"`
	MLAL15      bool                     `json:"m"`
	KVItems     []int64                  `json:"ki"`
	KVUnits     []int64                  `json:"ku"`
	StateItems  []int64                  `json:"si"`
	StateUnits  []int64                  `json:"su"`
	ContractSHA string                   `json:"c"`
}

// AnswerKey is a layout's identity as an agent tells sets apart (see
// answerKey): equal keys answer alike.
func AnswerKey(rec transferplan.LayoutRecord) string {
	k := answerKey{Wire: rec.Wire.OrV1(), Decode: rec.Decode, Prefill: rec.Prefill, MLAL15: rec.MLAL15Cache,
		KVItems: rec.PrefillKVItemLens, KVUnits: rec.PrefillKVUnitLens, StateItems: rec.PrefillStateItemLens,
		StateUnits: rec.PrefillStateUnitLens, ContractSHA: rec.PrefillContractSHA256}
	raw, _ := json.Marshal(k) // plain values always marshal
	return string(raw)
}

// DescribeParallelism is "TP 4" or "TP 8 DP 2".
func DescribeParallelism(p transferplan.Parallelism) string {
	if p.DPSize <= 1 {
		return fmt.Sprintf("TP %d", p.TPSize)
	}
	return fmt.Sprintf("TP %d DP %d", p.TPSize, p.DPSize)
}

// DescribePrefill names a set's prefill layout the way a person compares
// it with a prefill's answer: its parallelism, and the MLA L1.5 flag or the
// contract's hash when they are part of it.
func DescribePrefill(rec transferplan.LayoutRecord) string {
	s := "prefill " + DescribeParallelism(rec.Prefill)
	if rec.MLAL15Cache {
		s += " MLA L1.5"
	}
	if rec.PrefillContractSHA256 != "" {
		s += " contract " + rec.PrefillContractSHA256[:min(12, len(rec.PrefillContractSHA256))]
	}
	return s
}

// DescribeSets lists the prefill layouts of sets, in order, without repeats.
func DescribeSets(layouts []transferplan.LayoutRecord) string {
	var out []string
	for _, l := range layouts {
		if d := DescribePrefill(l); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return strings.Join(out, ", ")
}

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

package engine

import (
	"cmp"
	"errors"
	"slices"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Assessed is one layout as a self-transferring engine's rules judged
// and costed it.
type Assessed interface {
	// Refusal is the engine's refusal (a *transferplan.LayoutError); nil
	// when the engine serves the layout.
	Refusal() error
	// Reads are, for a compatible layout, the most prefill ranks one decode
	// rank reads (dummies left out) and the prefill TP ranks of a DP group
	// no decode rank reads, in order, found without mapping every decode
	// rank: advise judges thousands of layouts.
	Reads() (perDecodeRank int, idle []int)
	// Cost is what the layout's transfers cost.
	Cost() Cost
}

// Cost is an engine's cost of a layout's transfers.
type Cost interface {
	// Keys are the engine's cost keys, most significant first: the rows
	// are ordered by them as the engine's Rank orders candidates.
	Keys() []int
	// Transfers is the row's TransfersPerPage in the engine's unit (the
	// engine's docs say which).
	Transfers() int64
	// String says the cost for people.
	String() string
}

// AdviseBySpec is Advise for an engine that judges a pair from its spec
// and model alone: every combination of q's layouts set into q.Spec,
// judged by assess with the model read once, and the rows ordered cheapest
// first by the engine's cost keys, then the TP sizes nearest each other,
// then the fewest GPUs; refused rows last, in the order asked.
func AdviseBySpec(q AdviceQuery, assess func(spec pdv1.PDPairSpec, cfg *HFConfig) Assessed) []modelplan.Row {
	cfg, cfgErr := ReadHFConfig(q.Spec, Inputs{})
	rows := make([]modelplan.Row, 0, len(q.Prefill)*len(q.Decode))
	keys := map[int][]int{}
	for _, pr := range q.Prefill {
		for _, dr := range q.Decode {
			spec := q.Spec
			spec.Prefill.TensorParallelSize, spec.Prefill.DataParallelSize = int32(pr.TP), ptr(int32(max(1, pr.DP)))
			spec.Decode.TensorParallelSize, spec.Decode.DataParallelSize = int32(dr.TP), ptr(int32(max(1, dr.DP)))
			var a Assessed
			if cfgErr == nil {
				a = assess(spec, cfg)
			}
			row := adviceRow(spec, cfgErr, a)
			if row.Compatible {
				keys[len(rows)] = a.Cost().Keys()
			}
			rows = append(rows, row)
		}
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return compareAdvice(rows[i], rows[j], keys[i], keys[j]) })
	out := make([]modelplan.Row, len(rows))
	for i, k := range order {
		out[i] = rows[k]
	}
	return out
}

// compareAdvice orders two rows: compatible first, then by the engine's
// keys, then |prefill TP − decode TP|, GPUs, prefill TP, decode TP.
func compareAdvice(a, b modelplan.Row, ka, kb []int) int {
	if a.Compatible != b.Compatible {
		if a.Compatible {
			return -1
		}
		return 1
	}
	if !a.Compatible {
		return 0
	}
	if c := slices.Compare(ka, kb); c != 0 {
		return c
	}
	return cmp.Or(
		cmp.Compare(abs(a.Prefill.TPSize-a.Decode.TPSize), abs(b.Prefill.TPSize-b.Decode.TPSize)),
		cmp.Compare(a.GPUs, b.GPUs),
		cmp.Compare(a.Prefill.TPSize, b.Prefill.TPSize),
		cmp.Compare(a.Decode.TPSize, b.Decode.TPSize),
		cmp.Compare(a.Prefill.DPSize, b.Prefill.DPSize),
		cmp.Compare(a.Decode.DPSize, b.Decode.DPSize))
}

// adviceRow is the row of one layout: refused for cfgErr (the model could
// not be read), else as a assessed it.
func adviceRow(spec pdv1.PDPairSpec, cfgErr error, a Assessed) modelplan.Row {
	row := modelplan.Row{
		Prefill: transferplan.Parallelism{TPSize: int(spec.Prefill.TensorParallelSize), DPSize: int(spec.Prefill.DataParallel())},
		Decode:  transferplan.Parallelism{TPSize: int(spec.Decode.TensorParallelSize), DPSize: int(spec.Decode.DataParallel())},
		GPUs:    int(spec.Prefill.TensorParallelSize + spec.Decode.TensorParallelSize),
	}
	refusal := cfgErr
	if refusal == nil {
		refusal = a.Refusal()
	}
	var le *transferplan.LayoutError
	switch {
	case errors.As(refusal, &le):
		row.Reason, row.Message, row.Fix = string(le.Reason), le.Message, le.Fix
		return row
	case refusal != nil:
		row.Reason, row.Message = string(transferplan.ReasonInvalidLayout), refusal.Error()
		return row
	}
	c := a.Cost()
	row.Compatible, row.TransfersPerPage, row.Cost = true, c.Transfers(), c.String()
	row.PrefillRanksPerDecodeRank, row.IdlePrefillTPRanks = a.Reads()
	if row.IdlePrefillTPRanks == nil {
		row.IdlePrefillTPRanks = []int{}
	}
	row.IdlePrefillRanks = len(row.IdlePrefillTPRanks)
	return row
}

func ptr[T any](v T) *T { return &v }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

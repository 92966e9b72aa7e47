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

package plan

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/pairplans"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// writeTable prints the plans for people: a header with the layout and the
// verdict, one block per decode rank listing its prefill sources and the byte
// ranges they fill (fragments of the same shape are folded into one line), and
// the prefill fan-out.
func writeTable(w io.Writer, name string, derived *pdv1.DerivedBuffers, set *transferplan.PlanSet) error {
	sum := set.Summarize()
	if sum.Kind == "" {
		return writeRankMapTable(w, name, set, sum)
	}
	l := set.Layout
	var b strings.Builder
	fmt.Fprintf(&b, "PDPair %s: prefill TP %d DP %d → decode TP %d DP %d, %s, %d KV + %d state buffers, %d token(s)/page\n",
		cli.OrDash(name), l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize, l.AttentionBackend,
		len(l.KVBufferKinds), len(l.DecodeStateItemLens), l.TokensPerPage)
	writeDerived(&b, derived)
	fmt.Fprintf(&b, "COMPATIBLE  plan %s, %d plan(s), %d–%d prefill target(s) per decode rank, %d fragment(s), idle prefill ranks: %s\n",
		sum.Kind, len(set.Plans), sum.MinTargets, sum.MaxTargets, sum.Fragments, rankList(sum.IdlePrefillRanks))
	fmt.Fprintf(&b, "PAGE COST   %s\n\n", sum.PageCost)

	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DECODE\tPREFILL\tROLE\tDST-INFO\tBUFFERS\tSOURCE BYTES → DEST BYTES (per page)")
	for _, plan := range set.Plans {
		for i, t := range plan.Targets {
			decode := ""
			if i == 0 {
				decode = fmt.Sprintf("%d (needs %d)", plan.DecodeTPRank, plan.RequiredPrefillResponseNum)
			}
			for j, line := range fragmentLines(t) {
				if j > 0 {
					decode = ""
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", decode, cellIf(j == 0, fmt.Sprint(t.PrefillTPRank)),
					cellIf(j == 0, pairplans.TargetRole(t)), t.RequiredDstInfoNum, line)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nPREFILL FAN-OUT (decode ranks per prefill TP rank): %s\n", fanOutList(sum.PrefillFanOut))
	_, err := io.WriteString(w, b.String())
	return err
}

// fragmentLines folds a target's fragments by shape: "N buffers\tsrc → dst".
// The token-row fragments of one buffer (pages of several tokens whose rows
// a decode rank takes part of) fold into one shape: "rows 0–63: [a,b)+t·s".
func fragmentLines(t transferplan.PlanTarget) []string {
	if len(t.Fragments) == 0 {
		return []string{"-\twhole items"}
	}
	type shape struct{ srcOff, dstOff, n, srcStride, dstStride, rows, srcStep, dstStep int64 }
	var order []shape
	count := map[shape]int{}
	frags := t.Fragments
	for i := 0; i < len(frags); {
		f := frags[i]
		s := shape{f.SrcByteOffset, f.DstByteOffset, f.BytesPerPage, f.SrcPageStrideBytes, f.DstPageStrideBytes, 1, 0, 0}
		j := i + 1
		if j < len(frags) && sameBuffer(frags[j], f) {
			s.srcStep, s.dstStep = frags[j].SrcByteOffset-f.SrcByteOffset, frags[j].DstByteOffset-f.DstByteOffset
			for ; j < len(frags) && nextRow(frags[j], f, int64(j-i), s.srcStep, s.dstStep); j++ {
			}
			if s.rows = int64(j - i); s.rows == 1 {
				s.srcStep, s.dstStep = 0, 0
			}
		}
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
		i = j
	}
	lines := make([]string, 0, len(order))
	for _, s := range order {
		if s.rows == 1 {
			lines = append(lines, fmt.Sprintf("%d\t[%d,%d) of %d → [%d,%d) of %d",
				count[s], s.srcOff, s.srcOff+s.n, s.srcStride, s.dstOff, s.dstOff+s.n, s.dstStride))
			continue
		}
		lines = append(lines, fmt.Sprintf("%d\ttoken rows t=0–%d: [%d,%d)+t·%d of %d → [%d,%d)+t·%d of %d",
			count[s], s.rows-1, s.srcOff, s.srcOff+s.n, s.srcStep, s.srcStride, s.dstOff, s.dstOff+s.n, s.dstStep, s.dstStride))
	}
	return lines
}

// nextRow reports whether g is row k of the run that f starts: same buffer
// and length, offsets k steps further.
func nextRow(g, f transferplan.TransferFragment, k, srcStep, dstStep int64) bool {
	return sameBuffer(g, f) && g.BytesPerPage == f.BytesPerPage &&
		g.SrcByteOffset == f.SrcByteOffset+k*srcStep && g.DstByteOffset == f.DstByteOffset+k*dstStep
}

// sameBuffer reports whether two fragments of a target move the same buffer
// (a target's fragments of one buffer are consecutive token rows).
func sameBuffer(a, b transferplan.TransferFragment) bool {
	return a.BufferKind == b.BufferKind && a.BufferIndex == b.BufferIndex
}

func cellIf(show bool, s string) string {
	if show {
		return s
	}
	return ""
}

func rankList(ranks []int) string {
	if len(ranks) == 0 {
		return "none"
	}
	parts := make([]string, len(ranks))
	for i, r := range ranks {
		parts[i] = fmt.Sprint(r)
	}
	return strings.Join(parts, ",") + " (decode TP rank 0 sends them dummy messages)"
}

func fanOutList(fan []int) string {
	parts := make([]string, len(fan))
	for r, n := range fan {
		parts[r] = fmt.Sprintf("%d:%d", r, n)
	}
	return strings.Join(parts, " ")
}

// writeDerived prints what a model-aware pair's buffers were derived from
// and the groups, as an explicit PDPair would list them.
func writeDerived(b *strings.Builder, d *pdv1.DerivedBuffers) {
	if d == nil {
		return
	}
	fmt.Fprintf(b, "MODEL       %s\n", d.Model)
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DERIVED\tKIND\tCOUNT\tDECODE ITEM\tPREFILL ITEM\tDECODE UNIT\tPREFILL UNIT")
	row := func(field, kind string, g pdv1.BufferGeometry) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", field, kind, g.Count, g.DecodeItemBytes,
			deref(g.PrefillItemBytes), deref(g.DecodeUnitBytes), deref(g.PrefillUnitBytes))
	}
	for i, g := range d.KVBuffers {
		row(fmt.Sprintf("kvBuffers[%d]", i), string(g.Kind), g.BufferGeometry)
	}
	for i, g := range d.StateBuffers {
		row(fmt.Sprintf("stateBuffers[%d]", i), "state", g.BufferGeometry)
	}
	_ = tw.Flush()
}

func deref(p *int64) int64 {
	if p == nil {
		return 1
	}
	return *p
}

// writeRankMapTable is the table of a pair whose engine moves the bytes
// itself (vLLM, SGLang): no plans are published, so there are no fragments,
// buffers or page costs to show, only which prefill ranks each decode rank
// reads as the engine maps them.
func writeRankMapTable(w io.Writer, name string, set *transferplan.PlanSet, sum transferplan.Summary) error {
	l := set.Layout
	var b strings.Builder
	fmt.Fprintf(&b, "PDPair %s: prefill TP %d DP %d → decode TP %d DP %d, %d token(s)/page\n",
		cli.OrDash(name), l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize, l.TokensPerPage)
	fmt.Fprintf(&b, "COMPATIBLE  rank map, %d decode rank(s), %d–%d prefill rank(s) per decode rank; the engine moves the bytes, no plans are published\n\n",
		len(set.Plans), sum.MinTargets, sum.MaxTargets)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DECODE\tPREFILL\tROLE")
	for _, plan := range set.Plans {
		for i, t := range plan.Targets {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", cellIf(i == 0, fmt.Sprint(plan.DecodeTPRank)), t.PrefillTPRank, pairplans.TargetRole(t))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

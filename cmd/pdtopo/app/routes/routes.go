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

// Package routes is `pdtopo routes`: one decode TP rank's route plan, its
// sources, the bytes each fills, its dummies.
package routes

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/pairplans"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/internal/topograph"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

type options struct {
	env   *cli.Env
	print *printflags.PrintFlags
	file  string
	name  string
	rank  int
}

// NewCommand is `routes`.
func NewCommand(env *cli.Env) *cobra.Command {
	o := &options{env: env, print: printflags.New(printflags.Table, printflags.Table, printflags.JSON, printflags.YAML).
		WithNote("(json and yaml print the rank's RoutePlan)")}
	cmd := &cobra.Command{
		Use:   "routes (NAME | -f FILE|DIR|- [--name NAME]) --rank N",
		Short: "Show what one decode TP rank pulls, from which prefill ranks, which bytes, and its dummies",
		Long: `Show one decode TP rank's route plan: the prefill TP ranks it pulls from, the
byte ranges of every buffer each one fills (per page), the prefill ranks it
only sends dummy messages to, and how many answers complete a room.

With NAME the plan is the one the operator published for the PDPair (read from
its ConfigMaps and verified), or, when none is published, planned here from the
spec, which the output says. With -f the PDPair is read from a manifest.

A vLLM or SGLang pair has no plans: its engine moves the bytes. The output is
the engine's rank map for the rank: the prefill ranks it reads and those it
only notifies (docs/engines/vllm.md, docs/engines/sglang.md).`,
		Example: `  kubectl pdtopo routes llama3-70b-gqa-p8-d4 --rank 3
  pdtopo routes -f config/samples/pd_v1alpha1_pdpair_mla_p16_d8.yaml --rank 0 -o json`,
		Args: cobra.MaximumNArgs(1),
		RunE: o.run,
	}
	cmd.Flags().StringVarP(&o.file, "filename", "f", "", "PDPair manifest instead of a cluster PDPair: a file, a directory or - for standard input")
	cmd.Flags().StringVar(&o.name, "name", "", "with -f: the PDPair to use when the manifest holds several")
	o.print.AddFlags(cmd)
	cmd.Flags().IntVar(&o.rank, "rank", -1, "decode TP rank (within a DP group: 0 .. decode tensorParallelSize/dataParallelSize - 1; of a vLLM or SGLang pair the engine's decode rank, SGLang's global one)")
	return cmd
}

func (o *options) run(cmd *cobra.Command, args []string) error {
	format, err := o.print.Format()
	if err != nil {
		return cli.UsageError(err)
	}
	if !cmd.Flags().Changed("rank") {
		return cli.UsageErrorf("--rank N is required")
	}
	pairName, pp, err := o.load(cmd, args)
	if err != nil {
		return err
	}
	streams := o.env.Streams
	if pp.Incompatible != nil {
		return pairplans.Incompatible(streams.Out, o.print, format, pp.Incompatible)
	}
	n := len(pp.Set.Plans)
	if o.rank < 0 || o.rank >= n {
		return cli.UsageErrorf("--rank %d is out of range: PDPair %q has decode TP ranks 0..%d (decode TP %d / DP %d)",
			o.rank, pairName, n-1, pp.Set.Layout.Decode.TPSize, pp.Set.Layout.Decode.DPSize)
	}
	plan := pp.Set.Plans[o.rank]
	if format != printflags.Table && !pp.Published && pp.Origin != "" {
		fmt.Fprintf(streams.ErrOut, "%s: note: %s\n", cmd.CommandPath(), pp.Origin)
	}
	out := printflags.Output{Value: plan, Writers: map[printflags.Format]printflags.Writer{
		printflags.Table: func(w io.Writer) error { return writeRoutes(w, pairName, pp, plan) },
	}}
	if err := o.print.Print(streams.Out, format, out); err != nil {
		return cli.UsageErrorf("writing output: %v", err)
	}
	return nil
}

// load reads the pair from the cluster (NAME) or a manifest (-f) and plans it.
func (o *options) load(cmd *cobra.Command, args []string) (string, *pairplans.Plans, error) {
	switch {
	case o.file != "" && len(args) > 0:
		return "", nil, cli.UsageErrorf("give -f FILE|DIR|- or a PDPair NAME, not both")
	case o.file == "" && len(args) == 0:
		return "", nil, cli.UsageErrorf("a PDPair NAME (or -f FILE|DIR|-) is required")
	case len(args) > 0 && o.name != "":
		return "", nil, cli.UsageErrorf("--name picks a PDPair from a manifest (-f); in the cluster give the NAME alone")
	case o.file != "":
		return pairplans.FromManifest(o.file, o.name, o.env.Streams.In, o.env.Streams.ErrOut, o.env.Budget)
	}
	c, err := cli.Connect(o.env.Kube)
	if err != nil {
		return "", nil, err
	}
	pair, err := c.GetPair(cmd.Context(), args[0])
	if err != nil {
		return "", nil, err
	}
	pp, err := pairplans.FromCluster(cmd.Context(), c, pair, o.env.Budget)
	if err != nil {
		return "", nil, err
	}
	return pair.Namespace + "/" + pair.Name, pp, nil
}

// writeRoutes prints one decode rank's plan for people.
func writeRoutes(w io.Writer, pairName string, pp *pairplans.Plans, plan transferplan.RoutePlan) error {
	if topograph.IsRankMap(pp.Set) {
		return writeRankMapRoutes(w, pairName, pp, plan)
	}
	var b strings.Builder
	l := pp.Set.Layout
	fmt.Fprintf(&b, "PDPair %s: decode TP rank %d of %d, plan %s (prefill TP %d DP %d → decode TP %d DP %d)\n",
		cli.OrDash(pairName), plan.DecodeTPRank, len(pp.Set.Plans), plan.PlanKind, l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize)
	if pp.Origin != "" {
		fmt.Fprintf(&b, "Plans: %s\n", pp.Origin)
	}
	fmt.Fprintf(&b, "A room completes when %d prefill rank(s) report success; remote spec candidates: %s.\n\n",
		plan.RequiredPrefillResponseNum, yesNo(plan.SupportsRemoteSpecCandidates))

	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PREFILL\tROLE\tDST-INFO\tBYTES/PAGE\tBUFFERS\tKIND\tSOURCE BYTES → DEST BYTES (per page)")
	var total int64
	for _, t := range plan.Targets {
		mv := topograph.TargetMovement(plan, t, pp.Set.Layout)
		total += mv.BytesPerPage
		head := fmt.Sprintf("%d\t%s\t%d\t%s", t.PrefillTPRank, pairplans.TargetRole(t), t.RequiredDstInfoNum, bytesCell(mv, t))
		for i, line := range routeLines(t) {
			if i > 0 {
				head = "\t\t\t"
			}
			fmt.Fprintf(tw, "%s\t%s\n", head, line)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nTotal: %d byte(s) per page from %d source(s); %d dummy target(s) get registration and empty requests and send no status.\n",
		total, plan.RealTargetCount(), len(plan.Targets)-plan.RealTargetCount())
	if len(plan.IdlePrefillTPRanks) > 0 {
		fmt.Fprintf(&b, "Idle prefill ranks %s: no decode rank pulls from them, so this rank sends each a dummy registration and dummy requests so their rooms complete.\n",
			joinInts(plan.IdlePrefillTPRanks))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRankMapRoutes prints one decode rank of an engine's rank map (vLLM,
// SGLang): the prefill ranks it reads and those it only notifies; the
// engine's connector moves and sizes the bytes.
func writeRankMapRoutes(w io.Writer, pairName string, pp *pairplans.Plans, plan transferplan.RoutePlan) error {
	var b strings.Builder
	l := pp.Set.Layout
	fmt.Fprintf(&b, "PDPair %s: decode rank %d of %d, the engine's rank map (prefill TP %d DP %d → decode TP %d DP %d)\n",
		cli.OrDash(pairName), plan.DecodeTPRank, len(pp.Set.Plans), l.Prefill.TPSize, l.Prefill.DPSize, l.Decode.TPSize, l.Decode.DPSize)
	fmt.Fprintf(&b, "The engine's connector moves the bytes, pdtopo publishes no plans; a request completes when %d prefill rank(s) answer.\n\n",
		plan.RequiredPrefillResponseNum)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PREFILL\tROLE\tDST-INFO")
	for _, t := range plan.Targets {
		role := "reads"
		if t.IsDummy {
			role = "notified only"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\n", t.PrefillTPRank, role, t.RequiredDstInfoNum)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nReads %d prefill rank(s), notifies %d.\n", plan.RealTargetCount(), len(plan.Targets)-plan.RealTargetCount())
	_, err := io.WriteString(w, b.String())
	return err
}

func bytesCell(mv topograph.Movement, t transferplan.PlanTarget) string {
	if t.IsDummy {
		return "-"
	}
	return fmt.Sprint(mv.BytesPerPage)
}

// routeLines lists a target's fragments folded for reading: fragments of one
// kind with the same byte ranges become one line naming the buffer indices
// they cover, and the lines of the same buffers that step through a page by a
// fixed stride (one per token row of a multi-token page) become one line
// "N× [a,b) +s … ".
func routeLines(t transferplan.PlanTarget) []string {
	if t.IsDummy {
		return []string{"-\t-\tnothing: dummy registration and empty requests"}
	}
	if len(t.Fragments) == 0 {
		return []string{"all\tall\twhole items"}
	}
	type shape struct {
		kind                                    transferplan.BufferKind
		srcOff, dstOff, n, srcStride, dstStride int64
	}
	byShape := map[shape][]int{}
	var shapes []shape
	for _, f := range t.Fragments {
		s := shape{f.BufferKind, f.SrcByteOffset, f.DstByteOffset, f.BytesPerPage, f.SrcPageStrideBytes, f.DstPageStrideBytes}
		if _, ok := byShape[s]; !ok {
			shapes = append(shapes, s)
		}
		byShape[s] = append(byShape[s], f.BufferIndex)
	}
	// Rows: shapes covering the same buffers with the same length and strides.
	type rowKey struct {
		kind                    transferplan.BufferKind
		buffers                 string
		n, srcStride, dstStride int64
	}
	rows := map[rowKey][]shape{}
	var keys []rowKey
	for _, s := range shapes {
		k := rowKey{s.kind, indexRanges(byShape[s]), s.n, s.srcStride, s.dstStride}
		if _, ok := rows[k]; !ok {
			keys = append(keys, k)
		}
		rows[k] = append(rows[k], s)
	}
	first := func(k rowKey) int { return minInt(byShape[rows[k][0]]) }
	sort.SliceStable(keys, func(i, j int) bool { return first(keys[i]) < first(keys[j]) })
	var lines []string
	for _, k := range keys {
		ss := rows[k]
		sort.Slice(ss, func(i, j int) bool { return ss[i].srcOff < ss[j].srcOff })
		if srcStep, dstStep, ok := steps(ss, func(s shape) (int64, int64) { return s.srcOff, s.dstOff }); ok {
			a, b := ss[0], ss[0]
			lines = append(lines, fmt.Sprintf("%s\t%s\t%d× [%d,%d) +%d of %d → [%d,%d) +%d of %d", k.buffers, k.kind.SpecName(), len(ss),
				a.srcOff, a.srcOff+k.n, srcStep, k.srcStride, b.dstOff, b.dstOff+k.n, dstStep, k.dstStride))
			continue
		}
		for _, s := range ss {
			lines = append(lines, fmt.Sprintf("%s\t%s\t[%d,%d) of %d → [%d,%d) of %d", k.buffers, k.kind.SpecName(),
				s.srcOff, s.srcOff+k.n, k.srcStride, s.dstOff, s.dstOff+k.n, k.dstStride))
		}
	}
	return lines
}

// steps reports whether more than one item's offsets advance by fixed
// positive steps, and the steps.
func steps[T any](xs []T, offs func(T) (int64, int64)) (int64, int64, bool) {
	if len(xs) < 2 {
		return 0, 0, false
	}
	s0, d0 := offs(xs[0])
	s1, d1 := offs(xs[1])
	ss, ds := s1-s0, d1-d0
	if ss <= 0 || ds <= 0 {
		return 0, 0, false
	}
	for i := 2; i < len(xs); i++ {
		a, b := offs(xs[i-1])
		c, d := offs(xs[i])
		if c-a != ss || d-b != ds {
			return 0, 0, false
		}
	}
	return ss, ds, true
}

// indexRanges writes sorted indices as "0–79" runs, e.g. "0–3,8,10–11".
func indexRanges(idx []int) string {
	s := append([]int(nil), idx...)
	sort.Ints(s)
	var parts []string
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(s[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d–%d", s[i], s[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

func minInt(xs []int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		m = min(m, x)
	}
	return m
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

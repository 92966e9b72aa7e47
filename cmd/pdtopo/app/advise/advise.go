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

// Package advise is `pdtopo advise`: every prefill/decode layout of a model
// planned and ranked by what its KV transfers cost.
package advise

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/modelflags"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/modelplan"
)

type options struct {
	env       *cli.Env
	model     modelflags.Flags
	prefillTP []int
	decodeTP  []int
	prefillDP []int
	decodeDP  []int
	print     *printflags.PrintFlags
}

// adviseResult is what -o json|yaml prints: the layouts cheapest first.
type adviseResult struct {
	Model string `json:"model"`
	// Engine is the engine whose rules and costs ranked the layouts.
	Engine  string          `json:"engine"`
	Layouts []modelplan.Row `json:"layouts"`
}

// NewCommand is `advise`.
func NewCommand(env *cli.Env) *cobra.Command {
	o := &options{env: env, print: printflags.New(printflags.Table, printflags.Table, printflags.JSON, printflags.YAML)}
	cmd := &cobra.Command{
		Use:   "advise --hf-config config.json --prefill-tp 1,2,4,8 --decode-tp 1,2,4,8 --kv-cache-dtype DTYPE",
		Short: "Rank every prefill/decode layout of a model by what its KV transfers cost",
		Long: `Plan a model at every combination of the given prefill and decode TP (and DP)
sizes and print one row per layout, cheapest first: whether it plans (or why
not, with the fix), fragments per page, the prefill ranks each decode rank
pulls from, idle prefill ranks, the KV bytes one token costs a decode rank,
and the cost: the transfers one KV page costs the busiest decode rank.
Layouts over the plan budget (sized before planning) come after the plannable
ones, incompatible layouts last. docs/advise.md explains the cost and how to
use the table when sizing a fleet.

With --engine vllm or sglang the layouts are judged by that engine's rules
and ranked by what its own transfers cost (docs/engines/vllm.md,
docs/engines/sglang.md): prefill ranks each decode rank reads, then the
engine's further keys; FRAGS/PAGE and KV B/TOKEN are dashes, the engine
sizes its bytes. --kv-connector and the per-role page sizes, KV cache
layouts (vLLM) and PP sizes (SGLang) are the pair's.

Exit status: 0 when some layout plans, 2 unreadable or invalid input, 3 when
none does.`,
		Example: `  pdtopo advise --hf-config Llama-3.1-70B/config.json --prefill-tp 1,2,4,8,16 --decode-tp 1,2,4,8,16 \
      --tokens-per-page 16 --kv-cache-dtype bfloat16
  pdtopo advise --hf-config DeepSeek-V3/config.json --prefill-tp 8,16 --decode-tp 16 --decode-dp 1,8,16 \
      --kv-cache-dtype fp8 -o json
  pdtopo advise --engine vllm --hf-config Llama-3.1-70B/config.json --prefill-tp 4,8,16 --decode-tp 2,4,8 \
      --tokens-per-page 16 --kv-cache-dtype auto
  pdtopo advise --engine sglang --hf-config Qwen3-32B/config.json --prefill-tp 4,8 --decode-tp 8 --decode-dp 1,2 \
      --tokens-per-page 64 --kv-cache-dtype auto`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.model.Add(cmd.Flags())
	cmd.Flags().IntSliceVar(&o.prefillTP, "prefill-tp", nil, "prefill tensorParallelSize choices, comma-separated (required)")
	cmd.Flags().IntSliceVar(&o.decodeTP, "decode-tp", nil, "decode tensorParallelSize choices, comma-separated (required)")
	cmd.Flags().IntSliceVar(&o.prefillDP, "prefill-dp", []int{1}, "prefill dataParallelSize choices; combinations where DP does not divide TP are left out")
	cmd.Flags().IntSliceVar(&o.decodeDP, "decode-dp", []int{1}, "decode dataParallelSize choices; combinations where DP does not divide TP are left out")
	o.print.AddFlags(cmd)
	return cmd
}

// maxAdviseRows bounds the layouts one run plans (each is sized first).
const maxAdviseRows = 4096

func (o *options) run(cmd *cobra.Command) error {
	format, err := o.print.Format()
	if err != nil {
		return cli.UsageError(err)
	}
	if len(o.prefillTP) == 0 || len(o.decodeTP) == 0 {
		return cli.UsageErrorf("--prefill-tp and --decode-tp are required: the TP sizes to compare, e.g. 1,2,4,8")
	}
	if err := planbudget.Validate(o.env.Budget); err != nil {
		return cli.UsageErrorf("%v", err)
	}
	eng, err := o.model.EngineOf()
	if err != nil {
		return err
	}
	m, config, err := o.model.Model()
	if err != nil {
		return err
	}
	prefill, skippedP, err := roleChoices("prefill", o.prefillTP, o.prefillDP)
	if err != nil {
		return err
	}
	decode, skippedD, err := roleChoices("decode", o.decodeTP, o.decodeDP)
	if err != nil {
		return err
	}
	if n := len(prefill) * len(decode); n > maxAdviseRows {
		return cli.UsageErrorf("%d layouts; at most %d are compared at once", n, maxAdviseRows)
	}
	if skippedP+skippedD > 0 {
		fmt.Fprintf(o.env.Streams.ErrOut, "%s: note: left out %d TP/DP combination(s) whose DP does not divide the TP\n", cmd.CommandPath(), skippedP+skippedD)
	}
	base := o.model.Options(0, 1, 0, 1)
	spec := o.model.Spec(eng, config, 0, 1, 0, 1)
	rows := eng.Advise(engine.AdviceQuery{Spec: spec, Model: m, Base: base, MLAL15Cache: o.model.MLAL15Cache, Prefill: prefill, Decode: decode, Budget: o.env.Budget})
	res := adviseResult{Model: m.Describe() + "; " + o.model.DescribeDtypes(), Engine: eng.Name(), Layouts: rows}
	if spec.Engine != nil {
		res.Model = m.Describe() + "; " + o.model.DescribeEngine(eng, spec) + ", KV cache " +
			spec.RoleKVCacheDtype(spec.Prefill) + " → " + spec.RoleKVCacheDtype(spec.Decode)
	}
	out := printflags.Output{Value: res, Writers: map[printflags.Format]printflags.Writer{
		printflags.Table: func(w io.Writer) error { return writeAdviseTable(w, res) },
	}}
	if err := o.print.Print(o.env.Streams.Out, format, out); err != nil {
		return cli.UsageErrorf("writing output: %v", err)
	}
	if len(rows) == 0 || !rows[0].Compatible {
		return cli.ErrIncompatible
	}
	return nil
}

// roleChoices are the TP × DP combinations in which DP divides TP.
func roleChoices(role string, tps, dps []int) ([]modelgeom.Role, int, error) {
	var out []modelgeom.Role
	skipped := 0
	for _, tp := range tps {
		if tp < 1 || tp > 4096 {
			return nil, 0, cli.UsageErrorf("--%s-tp values must be from 1 to 4096, got %d", role, tp)
		}
		for _, dp := range dps {
			if dp < 1 || dp > 4096 {
				return nil, 0, cli.UsageErrorf("--%s-dp values must be from 1 to 4096, got %d", role, dp)
			}
			if tp%dp != 0 {
				skipped++
				continue
			}
			out = append(out, modelgeom.Role{TP: tp, DP: dp})
		}
	}
	if len(out) == 0 {
		return nil, 0, cli.UsageErrorf("no --%s-dp value divides a --%s-tp value", role, role)
	}
	return out, skipped, nil
}

// writeAdviseTable prints the rows for people, the fixes of the refused
// ones below the table.
func writeAdviseTable(w io.Writer, res adviseResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "MODEL %s\n\n", res.Model)
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tPREFILL TP/DP\tDECODE TP/DP\tVERDICT\tPLAN\tFRAGS/PAGE\tSOURCES\tIDLE\tKV B/TOKEN\tTRANSFERS/PAGE\tCOST")
	var notes []string
	for i, r := range res.Layouts {
		verdict, plan, frags, sources, idle, bytes, transfers := "compatible", r.PlanKind, fmt.Sprint(r.FragmentsPerPage),
			fmt.Sprint(r.PrefillRanksPerDecodeRank), fmt.Sprint(r.IdlePrefillRanks), fmt.Sprint(r.BytesPerTokenPerDecodeRank), fmt.Sprint(r.TransfersPerPage)
		if r.Compatible && r.PlanKind == "" {
			// The engine moves the bytes itself: no plans, fragments or
			// buffers of pdtopo's to count.
			plan, frags, bytes = "-", "-", "-"
		}
		if !r.Compatible {
			verdict, frags, sources, idle, bytes, transfers = r.Reason, "-", "-", "-", "-", "-"
			if plan == "" {
				plan = "-"
			}
			notes = append(notes, fmt.Sprintf("%d. prefill TP %d/%d, decode TP %d/%d: %s: %s", i+1,
				r.Prefill.TPSize, r.Prefill.DPSize, r.Decode.TPSize, r.Decode.DPSize, r.Reason, cli.OneLine(r.Message)))
		}
		fmt.Fprintf(tw, "%d\t%d/%d\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, r.Prefill.TPSize, r.Prefill.DPSize,
			r.Decode.TPSize, r.Decode.DPSize, verdict, plan, frags, sources, idle, bytes, transfers, r.Cost)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		b.WriteString("\nWhy the others do not plan, and what would:\n")
		for _, n := range notes {
			b.WriteString("  " + n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

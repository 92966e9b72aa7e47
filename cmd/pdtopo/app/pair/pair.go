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

// Package pair is `pdtopo pair`: a model-aware PDPair written from a model's
// config.json and a prefill/decode layout, planned on the way.
package pair

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/modelflags"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/pairplans"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

type options struct {
	// env gives the namespace (-n), when one is asked for.
	env       *cli.Env
	model     modelflags.Flags
	name      string
	prefillTP int
	prefillDP int
	decodeTP  int
	decodeDP  int
	explicit  bool
	print     *printflags.PrintFlags
	configMap string
	configKey string
}

// NewCommand is `pair`.
func NewCommand(env *cli.Env) *cobra.Command {
	o := &options{env: env, print: printflags.New(printflags.YAML, printflags.YAML, printflags.JSON)}
	cmd := &cobra.Command{
		Use:   "pair --hf-config config.json --prefill-tp P --decode-tp D --kv-cache-dtype DTYPE --name NAME",
		Short: "Write a model-aware PDPair from a model's config.json",
		Long: `Write a complete PDPair for a model and a prefill/decode layout.

The PDPair carries the model (spec.model.hfConfig: the keys of config.json
that size the KV cache, plus architectures and model_type), the KV cache
dtype and the page size; the operator derives the KV and state buffers from
them as the engine registers them. The derived buffers follow the YAML as a
comment; with --explicit they replace spec.model as spec.kvBuffers and
spec.stateBuffers, the fields of an explicit PDPair.

The pair is planned too: an incompatible layout is printed all the same,
with the verdict and its fix on standard error (exit 3).

With --engine vllm or sglang the PDPair names the engine (spec.engine) and
carries each role's engine settings (tokensPerPage, kvCacheLayout for vLLM,
pipelineParallelSize for SGLang, the literal kvCacheDtype); the verdict is
the engine's rules', and no buffers are derived: the engine moves the bytes.

Exit status: 0 compatible, 2 unreadable or invalid input (a config the
derivation refuses names the key), 3 incompatible layout, 5 past the plan
budget.`,
		Example: `  pdtopo pair --hf-config Llama-3.1-70B/config.json --prefill-tp 8 --decode-tp 4 \
      --tokens-per-page 16 --kv-cache-dtype bfloat16 --name llama3-70b | kubectl apply -f -
  pdtopo pair --hf-config DeepSeek-V3/config.json --prefill-tp 16 --decode-tp 8 \
      --kv-cache-dtype bfloat16 --name dsv3 --explicit -o json
  pdtopo pair --engine vllm --hf-config Llama-3.1-8B/config.json --prefill-tp 4 --decode-tp 2 \
      --tokens-per-page 16 --kv-cache-dtype auto --name llama31-8b`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run() },
	}
	o.model.Add(cmd.Flags())
	cmd.Flags().StringVar(&o.name, "name", "", "the PDPair's name (required)")
	cmd.Flags().IntVar(&o.prefillTP, "prefill-tp", 0, "the prefill fleet's tensorParallelSize, its whole attention world (required)")
	cmd.Flags().IntVar(&o.prefillDP, "prefill-dp", 1, "the prefill fleet's dataParallelSize")
	cmd.Flags().IntVar(&o.decodeTP, "decode-tp", 0, "the decode fleet's tensorParallelSize (required)")
	cmd.Flags().IntVar(&o.decodeDP, "decode-dp", 1, "the decode fleet's dataParallelSize")
	cmd.Flags().BoolVar(&o.explicit, "explicit", false, "print the derived kvBuffers and stateBuffers instead of spec.model")
	o.print.AddFlags(cmd)
	cmd.Flags().StringVar(&o.configMap, "config-map", "", "refer to the config in this ConfigMap (spec.model.configMapKeyRef) instead of carrying it inline")
	cmd.Flags().StringVar(&o.configKey, "config-map-key", "config.json", "with --config-map: the key holding config.json")
	return cmd
}

func (o *options) run() error {
	format, err := o.print.Format()
	if err != nil {
		return cli.UsageError(err)
	}
	if errs := validation.IsDNS1123Subdomain(o.name); o.name == "" || len(errs) > 0 || len(o.name) > 63 {
		return cli.UsageErrorf("--name must be a DNS subdomain of at most 63 characters (the PDPair's name), got %q", o.name)
	}
	if err := modelflags.CheckRole("prefill", o.prefillTP, o.prefillDP); err != nil {
		return err
	}
	if err := modelflags.CheckRole("decode", o.decodeTP, o.decodeDP); err != nil {
		return err
	}
	eng, err := o.model.EngineOf()
	if err != nil {
		return err
	}
	_, config, err := o.model.Model()
	if err != nil {
		return err
	}
	minimal, err := modelgeom.Minimal(config, engine.HFConfigKeys...)
	if err != nil {
		return cli.UsageErrorf("--hf-config: %v", err)
	}
	spec := o.model.Spec(eng, minimal, o.prefillTP, o.prefillDP, o.decodeTP, o.decodeDP)
	p, err := eng.Resolve(spec, engine.Inputs{})
	var le *transferplan.LayoutError
	switch {
	case engine.IsInputError(err) && errors.As(err, &le):
		return cli.UsageErrorf("%s: %s", le.Reason, le.Message)
	case errors.As(err, &le):
		return cli.Exitf(cli.ExitIncompatible, "INCOMPATIBLE %s: %s", le.Reason, le.Message)
	case err != nil:
		return cli.UsageErrorf("%v", err)
	}
	if o.explicit && p.Derived() == nil {
		return cli.UsageErrorf("--explicit prints the buffers derived from the model, and engine %s derives none (it moves the bytes itself): leave --explicit out", eng.Name())
	}
	if o.configMap != "" {
		spec.Model.HFConfig = nil
		spec.Model.ConfigMapKeyRef = &pdv1.ConfigMapKeyReference{Name: o.configMap, Key: o.configKey}
	}
	_, planErr := pairplans.PlanPair(o.env.Budget, p)
	if ee, ok := cli.AsExit(planErr); ok && ee.Code != cli.ExitTooLarge {
		return ee
	}
	if err := o.write(o.env.Streams.Out, format, spec, p, planErr); err != nil {
		return cli.UsageErrorf("writing output: %v", err)
	}
	switch {
	case errors.As(planErr, &le):
		return cli.Exitf(cli.ExitIncompatible, "INCOMPATIBLE %s: %s", le.Reason, le.Message)
	case planErr != nil:
		return planErr
	}
	return nil
}

// write prints the PDPair: the model form with the derived buffers as a
// comment, or the explicit form.
func (o *options) write(w io.Writer, format printflags.Format, spec pdv1.PDPairSpec, p engine.Pair, planErr error) error {
	if o.explicit {
		spec = p.Explicit()
		if spec.AttentionBackend == "" {
			spec.AttentionBackend = pdv1.AttentionMHA
		}
	}
	doc, err := o.document(spec)
	if err != nil {
		return err
	}
	return o.print.Print(w, format, printflags.Output{Writers: map[printflags.Format]printflags.Writer{
		printflags.JSON: func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "%s\n", doc)
			return err
		},
		printflags.YAML: func(w io.Writer) error { return o.writeYAML(w, doc, p, planErr) },
	}})
}

// writeYAML prints the PDPair as YAML after comments saying what it was
// derived from and what the operator will find, and, for the model form,
// the derived buffers as a comment.
func (o *options) writeYAML(w io.Writer, doc []byte, p engine.Pair, planErr error) error {
	out, err := yaml.JSONToYAML(doc)
	if err != nil {
		return err
	}
	var b strings.Builder
	derived := p.Derived()
	if derived != nil {
		fmt.Fprintf(&b, "# %s\n", cli.OneLine(derived.Model))
	}
	fmt.Fprintf(&b, "# %s\n", cli.OneLine(verdictLine(p, planErr)))
	b.Write(out)
	// An engine that moves the bytes itself derives no buffers: there is
	// nothing to print as the explicit form.
	if !o.explicit && derived != nil {
		explicit, err := yaml.Marshal(struct {
			AttentionBackend pdv1.AttentionBackend   `json:"attentionBackend"`
			KVBuffers        []pdv1.KVBufferGroup    `json:"kvBuffers"`
			StateBuffers     []pdv1.StateBufferGroup `json:"stateBuffers,omitempty"`
		}{derived.AttentionBackend, derived.KVBuffers, derived.StateBuffers})
		if err != nil {
			return err
		}
		b.WriteString("# The operator derives these buffers from spec.model (pdtopo pair --explicit prints them as the spec):\n")
		for _, line := range strings.Split(strings.TrimRight(string(explicit), "\n"), "\n") {
			b.WriteString("#   " + line + "\n")
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// document is the PDPair as JSON, without the empty status and timestamps
// an object marshalled whole would carry.
func (o *options) document(spec pdv1.PDPairSpec) ([]byte, error) {
	meta := map[string]string{"name": o.name}
	if ns := o.env.Namespace(); ns != "" {
		meta["namespace"] = ns
	}
	return json.MarshalIndent(struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]string `json:"metadata"`
		Spec       pdv1.PDPairSpec   `json:"spec"`
	}{pdv1.GroupVersion.String(), "PDPair", meta, spec}, "", "  ")
}

// verdictLine says what the operator will find, in one line.
func verdictLine(p engine.Pair, planErr error) string {
	var le *transferplan.LayoutError
	var ee *cli.ExitError
	switch {
	case errors.As(planErr, &le):
		return fmt.Sprintf("INCOMPATIBLE %s: %s", le.Reason, le.Message)
	case errors.As(planErr, &ee):
		return ee.Msg
	}
	size, _ := p.Size(transferplan.Budget{})
	if size.Kind == "" {
		// The engine maps ranks and plans nothing: its own description.
		return "Compatible: " + p.DescribeCompatible(transferplan.Summary{})
	}
	pre, dec := p.Explicit().Prefill, p.Explicit().Decode
	return fmt.Sprintf("Compatible: prefill TP %d DP %d → decode TP %d DP %d, %s plans, %d fragments",
		pre.TensorParallelSize, pre.DataParallel(), dec.TensorParallelSize, dec.DataParallel(), size.Kind, size.Fragments)
}

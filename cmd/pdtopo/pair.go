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

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

type pairOptions struct {
	// kube gives the namespace (-n), when one is asked for.
	kube      *genericclioptions.ConfigFlags
	streams   genericclioptions.IOStreams
	model     modelFlags
	name      string
	prefillTP int
	prefillDP int
	decodeTP  int
	decodeDP  int
	explicit  bool
	output    string
	configMap string
	configKey string
}

var pairOutputs = []string{"yaml", "json"}

func newPairCommand(kube *genericclioptions.ConfigFlags, streams genericclioptions.IOStreams) *cobra.Command {
	o := &pairOptions{streams: streams, kube: kube}
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

Exit status: 0 compatible, 2 unreadable or invalid input (a config the
derivation refuses names the key), 3 incompatible layout, 5 past the plan
budget.`,
		Example: `  pdtopo pair --hf-config Llama-3.1-70B/config.json --prefill-tp 8 --decode-tp 4 \
      --tokens-per-page 16 --kv-cache-dtype bfloat16 --name llama3-70b | kubectl apply -f -
  pdtopo pair --hf-config DeepSeek-V3/config.json --prefill-tp 16 --decode-tp 8 \
      --kv-cache-dtype bfloat16 --name dsv3 --explicit -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run() },
	}
	o.model.add(cmd.Flags())
	cmd.Flags().StringVar(&o.name, "name", "", "the PDPair's name (required)")
	cmd.Flags().IntVar(&o.prefillTP, "prefill-tp", 0, "the prefill fleet's tensorParallelSize, its whole attention world (required)")
	cmd.Flags().IntVar(&o.prefillDP, "prefill-dp", 1, "the prefill fleet's dataParallelSize")
	cmd.Flags().IntVar(&o.decodeTP, "decode-tp", 0, "the decode fleet's tensorParallelSize (required)")
	cmd.Flags().IntVar(&o.decodeDP, "decode-dp", 1, "the decode fleet's dataParallelSize")
	cmd.Flags().BoolVar(&o.explicit, "explicit", false, "print the derived kvBuffers and stateBuffers instead of spec.model")
	cmd.Flags().StringVarP(&o.output, "output", "o", "yaml", "output format: "+strings.Join(pairOutputs, ", "))
	cmd.Flags().StringVar(&o.configMap, "config-map", "", "refer to the config in this ConfigMap (spec.model.configMapKeyRef) instead of carrying it inline")
	cmd.Flags().StringVar(&o.configKey, "config-map-key", "config.json", "with --config-map: the key holding config.json")
	return cmd
}

func (o *pairOptions) run() error {
	if !contains(pairOutputs, o.output) {
		return usageErrorf("-o must be one of %s, got %q", strings.Join(pairOutputs, ", "), o.output)
	}
	if errs := validation.IsDNS1123Subdomain(o.name); o.name == "" || len(errs) > 0 || len(o.name) > 63 {
		return usageErrorf("--name must be a DNS subdomain of at most 63 characters (the PDPair's name), got %q", o.name)
	}
	if err := checkRole("prefill", o.prefillTP, o.prefillDP); err != nil {
		return err
	}
	if err := checkRole("decode", o.decodeTP, o.decodeDP); err != nil {
		return err
	}
	_, config, err := o.model.model()
	if err != nil {
		return err
	}
	minimal, err := modelgeom.Minimal(config)
	if err != nil {
		return usageErrorf("--hf-config: %v", err)
	}
	spec := o.spec(minimal)
	p, err := engines.For(spec).Resolve(spec, engine.Inputs{})
	var le *transferplan.LayoutError
	switch {
	case engine.IsInputError(err) && errors.As(err, &le):
		return usageErrorf("%s: %s", le.Reason, le.Message)
	case errors.As(err, &le):
		return &exitError{code: exitIncompatible, msg: fmt.Sprintf("INCOMPATIBLE %s: %s", le.Reason, le.Message)}
	case err != nil:
		return usageErrorf("%v", err)
	}
	if o.configMap != "" {
		spec.Model.HFConfig = nil
		spec.Model.ConfigMapKeyRef = &pdv1.ConfigMapKeyReference{Name: o.configMap, Key: o.configKey}
	}
	_, planErr := planPair(p)
	if ee, ok := asExit(planErr); ok && ee.code != exitTooLarge {
		return ee
	}
	if err := o.write(o.streams.Out, spec, p, planErr); err != nil {
		return usageErrorf("writing output: %v", err)
	}
	switch {
	case errors.As(planErr, &le):
		return &exitError{code: exitIncompatible, msg: fmt.Sprintf("INCOMPATIBLE %s: %s", le.Reason, le.Message)}
	case planErr != nil:
		return planErr
	}
	return nil
}

// spec is the model-aware spec of the flags, with the config inline.
func (o *pairOptions) spec(config []byte) pdv1.PDPairSpec {
	t := int32(o.model.tokensPerPage)
	pdp, ddp := int32(o.prefillDP), int32(o.decodeDP)
	spec := pdv1.PDPairSpec{
		TokensPerPage: &t,
		KVCacheDtype:  pdv1.KVCacheDtype(o.model.kvCacheDtype),
		MLAL15Cache:   o.model.mlaL15Cache,
		Prefill:       pdv1.FleetLayout{TensorParallelSize: int32(o.prefillTP), DataParallelSize: &pdp, KVCacheDtype: pdv1.KVCacheDtype(o.model.prefillDtype)},
		Decode:        pdv1.FleetLayout{TensorParallelSize: int32(o.decodeTP), DataParallelSize: &ddp, KVCacheDtype: pdv1.KVCacheDtype(o.model.decodeDtype)},
		Model:         &pdv1.ModelSpec{HFConfig: &runtime.RawExtension{Raw: config}},
	}
	if o.model.draftLayers >= 0 {
		n := int32(o.model.draftLayers)
		spec.Model.DraftLayers = &n
	}
	return spec
}

// write prints the PDPair: the model form with the derived buffers as a
// comment, or the explicit form.
func (o *pairOptions) write(w io.Writer, spec pdv1.PDPairSpec, p engine.Pair, planErr error) error {
	derived := p.Derived()
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
	if o.output == "json" {
		_, err := fmt.Fprintf(w, "%s\n", doc)
		return err
	}
	out, err := yaml.JSONToYAML(doc)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", commentLine(derived.Model))
	fmt.Fprintf(&b, "# %s\n", commentLine(verdictLine(p, planErr)))
	b.Write(out)
	if !o.explicit {
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
func (o *pairOptions) document(spec pdv1.PDPairSpec) ([]byte, error) {
	meta := map[string]string{"name": o.name}
	if o.kube != nil && o.kube.Namespace != nil && *o.kube.Namespace != "" {
		meta["namespace"] = *o.kube.Namespace
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
	var ee *exitError
	switch {
	case errors.As(planErr, &le):
		return fmt.Sprintf("INCOMPATIBLE %s: %s", le.Reason, le.Message)
	case errors.As(planErr, &ee):
		return ee.msg
	}
	size, _ := p.Size(transferplan.Budget{})
	pre, dec := p.Explicit().Prefill, p.Explicit().Decode
	return fmt.Sprintf("Compatible: prefill TP %d DP %d → decode TP %d DP %d, %s plans, %d fragments",
		pre.TensorParallelSize, pre.DataParallel(), dec.TensorParallelSize, dec.DataParallel(), size.Kind, size.Fragments)
}

func commentLine(s string) string { return strings.Join(strings.Fields(s), " ") }

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

// Package contract is `pdtopo contract`: a live engine's cache transfer
// contract read from a prefill's bootstrap server or a decode agent, decoded
// as the engine decodes it, and written out whole.
package contract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/printflags"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

type options struct {
	env     *cli.Env
	print   *printflags.PrintFlags
	format  printflags.Format
	prefill string
	agent   string
	rank    int
	file    string
	name    string
	key     string
	timeout time.Duration
}

// NewCommand is `contract`.
func NewCommand(env *cli.Env) *cobra.Command {
	o := &options{env: env, print: printflags.New(printflags.Raw, printflags.Raw, printflags.JSON, printflags.YAML, printflags.ConfigMap)}
	cmd := &cobra.Command{
		Use:   "contract (--prefill HOST:PORT | --agent HOST:PORT [--rank R]) [-o raw|json|yaml|configmap] [--file FILE]",
		Short: "Save a live engine's cache transfer contract (cache-contract wire)",
		Long: `Read the cache transfer contract a running engine uses, the bytes it exchanges
on the cache-contract wire, and write it out:

  --prefill HOST:PORT  from a prefill's bootstrap server (its answer for
                       engine_rank=-1 carries the contract as cache_layout)
  --agent HOST:PORT    from a decode agent's probe address (the contract the
                       engine of --rank registered; by default the lowest rank
                       that registered one)

The contract is decoded as the engine decodes it before anything is written.
-o raw writes its bytes as the source gave them (what spec.cacheContracts
takes inline), -o json (or yaml) adds where it came from and its SHA-256,
-o configmap writes a ConfigMap for spec.cacheContracts.<role>.configMapKeyRef. With --file
the output goes to FILE, whole or not at all.

Exit status: 0 written, 2 bad flags or a contract the engine cannot decode,
4 the engine could not be read (unreachable, no answer within --timeout, an
answer that is not a contract: the message names the URL and the numbers).`,
		Example: `  kubectl pdtopo contract --prefill llama-prefill.llm.svc:8998 --file prefill.json
  kubectl port-forward pod/llama-decode-0 9440 &
  kubectl pdtopo contract --agent 127.0.0.1:9440 -o configmap --name llama-decode-contract | kubectl apply -f -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	cmd.Flags().StringVar(&o.prefill, "prefill", "", "a prefill's bootstrap server, HOST:PORT (spec.prefill.bootstrapAddress)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "a decode agent's probe address, HOST:PORT (the pod IP, port 9440)")
	cmd.Flags().IntVar(&o.rank, "rank", -1, "with --agent: the engine rank whose contract to read (default: the lowest that registered one)")
	o.print.AddFlags(cmd)
	cmd.Flags().StringVar(&o.file, "file", "", "write to FILE instead of standard output")
	cmd.Flags().StringVar(&o.name, "name", "", "with -o configmap: the ConfigMap's name (default prefill-contract or decode-contract)")
	cmd.Flags().StringVar(&o.key, "key", "contract.json", "with -o configmap: the key holding the contract")
	cmd.Flags().DurationVar(&o.timeout, "timeout", livecontract.DefaultTimeout, "how long each request may take (connection, headers and body)")
	return cmd
}

// LiveContract is what -o json and yaml print: a contract read from a
// live engine, with where from.
type LiveContract struct {
	Source pdv1.ContractSource `json:"source"`
	From   string              `json:"from"`
	Rank   *int                `json:"rank,omitempty"`
	TPSize int                 `json:"prefillTPSize,omitempty"`
	DPSize int                 `json:"prefillDPSize,omitempty"`
	SHA256 string              `json:"sha256"`
	Bytes  int                 `json:"bytes"`
	// Contract is the wire JSON as a string, byte for byte what the
	// source gave (what spec.cacheContracts.<role>.inline takes).
	Contract string `json:"contract"`
}

func (o *options) check() error {
	if (o.prefill == "") == (o.agent == "") {
		return cli.UsageErrorf("give exactly one of --prefill HOST:PORT and --agent HOST:PORT")
	}
	format, err := o.print.Format()
	if err != nil {
		return cli.UsageError(err)
	}
	o.format = format
	switch {
	case o.rank < -1 || (o.rank >= 0 && o.agent == ""):
		return cli.UsageErrorf("--rank is a non-negative engine rank, with --agent only (got %d)", o.rank)
	case o.timeout <= 0:
		return cli.UsageErrorf("--timeout must be positive, got %s", o.timeout)
	}
	for flag, addr := range map[string]string{"--prefill": o.prefill, "--agent": o.agent} {
		if err := livecontract.CheckAddress(addr); addr != "" && err != nil {
			return cli.UsageErrorf("%s: %v", flag, err)
		}
	}
	if o.format == printflags.ConfigMap {
		if o.name == "" {
			o.name = "decode-contract"
			if o.prefill != "" {
				o.name = "prefill-contract"
			}
		}
		if errs := validation.IsDNS1123Subdomain(o.name); len(errs) > 0 {
			return cli.UsageErrorf("--name %q is not a ConfigMap name: %s", o.name, strings.Join(errs, "; "))
		}
		if errs := validation.IsConfigMapKey(o.key); len(errs) > 0 {
			return cli.UsageErrorf("--key %q is not a ConfigMap key: %s", o.key, strings.Join(errs, "; "))
		}
	}
	return nil
}

func (o *options) run(ctx context.Context) error {
	if err := o.check(); err != nil {
		return err
	}
	client := livecontract.NewClient(o.timeout)
	got, err := o.read(ctx, client)
	if err != nil {
		return err
	}
	c, err := plancontract.Parse([]byte(got.Contract))
	if err != nil {
		return cli.UsageErrorf("%s (%s) gave a contract the engine cannot decode, not written: %v", got.Source, got.From, err)
	}
	got.SHA256, got.Bytes = c.SHA256(), len(got.Contract)
	var out bytes.Buffer
	if err := o.print.Print(&out, o.format, o.output(got)); err != nil {
		return cli.UsageErrorf("encoding the output: %v", err)
	}
	if o.file == "" {
		_, err = o.env.Streams.Out.Write(out.Bytes())
		return err
	}
	if err := writeWhole(o.file, out.Bytes()); err != nil {
		return cli.UsageErrorf("--file: %v", err)
	}
	fmt.Fprintf(o.env.Streams.ErrOut, "wrote %s: the %s contract from %s, %d bytes, SHA-256 %s\n", o.file, roleOf(got.Source), got.From, got.Bytes, got.SHA256)
	return nil
}

// read fetches the contract; every failure is exit 4 naming the URL.
func (o *options) read(ctx context.Context, client *livecontract.Client) (*LiveContract, error) {
	if o.prefill != "" {
		p, err := client.Prefill(ctx, o.prefill)
		if err != nil {
			return nil, sourceError(err)
		}
		return &LiveContract{Source: pdv1.ContractSourcePrefillBootstrap, From: p.URL, TPSize: p.TPSize, DPSize: p.DPSize, Contract: string(p.Contract)}, nil
	}
	a, err := client.Agent(ctx, o.agent)
	if err != nil {
		return nil, sourceError(err)
	}
	pick := -1
	for i, c := range a.Contracts {
		if (o.rank < 0 && (pick < 0 || c.Rank < a.Contracts[pick].Rank)) || c.Rank == o.rank {
			pick = i
		}
	}
	if pick < 0 {
		what := "no engine rank registered a contract"
		if o.rank >= 0 {
			what = fmt.Sprintf("engine rank %d registered no contract", o.rank)
		}
		return nil, cli.ClusterErrorf("GET %s: %s: the agent serves ranks %v; %s (engines register it at start on the cache-contract wire)",
			a.URL, livecontract.ReasonNoContract, a.Ranks, what)
	}
	rc := a.Contracts[pick]
	raw, err := client.AgentContract(ctx, o.agent, rc.Rank, rc.SHA256)
	if err != nil {
		return nil, sourceError(err)
	}
	rank := rc.Rank
	return &LiveContract{Source: pdv1.ContractSourceAgentRegistration, From: livecontract.AgentContractURL(o.agent, rank), Rank: &rank, Contract: string(raw)}, nil
}

func sourceError(err error) error { return &cli.ExitError{Code: cli.ExitCluster, Msg: err.Error()} }

func roleOf(s pdv1.ContractSource) string {
	if s == pdv1.ContractSourcePrefillBootstrap {
		return "prefill"
	}
	return "decode"
}

// output is the contract in every format: raw its bytes, json and yaml
// with where it came from, configmap a ConfigMap holding it.
func (o *options) output(c *LiveContract) printflags.Output {
	return printflags.Output{Value: c, Writers: map[printflags.Format]printflags.Writer{
		printflags.Raw: func(w io.Writer) error {
			_, err := io.WriteString(w, c.Contract)
			return err
		},
		printflags.ConfigMap: func(w io.Writer) error { return o.writeConfigMap(w, c) },
	}}
}

// writeConfigMap writes a ConfigMap holding the contract, after a comment
// saying where it came from and where to name it.
func (o *options) writeConfigMap(w io.Writer, c *LiveContract) error {
	cm := corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		// Without -n the ConfigMap is applied to the current namespace.
		ObjectMeta: metav1.ObjectMeta{Name: o.name, Namespace: o.env.Namespace()},
		Data:       map[string]string{o.key: c.Contract},
	}
	b, err := yaml.Marshal(cm)
	if err != nil {
		return err
	}
	header := fmt.Sprintf("# The %s's cache transfer contract, read from %s (SHA-256 %s);\n# name it in spec.cacheContracts.%s.configMapKeyRef {name: %s, key: %s}.\n",
		roleOf(c.Source), c.From, c.SHA256, roleOf(c.Source), o.name, o.key)
	_, err = w.Write(append([]byte(header), b...))
	return err
}

// writeWhole writes b to path through a temporary file in the same
// directory, renamed over path only once it is whole.
func writeWhole(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone after the rename; removes a failed write
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

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

package cli

import (
	"flag"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Env is what the root command gives every verb: the kubectl flags
// (--kubeconfig, --context, -n, …) shared by every verb that reads a
// cluster, the streams, and the plan budget of this invocation.
type Env struct {
	Kube    *genericclioptions.ConfigFlags
	Streams genericclioptions.IOStreams
	// Budget is set by the flags of planbudget (the manager's flags, under
	// the same names), from transferplan.DefaultBudget.
	Budget transferplan.Budget
}

// NewEnv is the environment of one command line run on streams.
func NewEnv(streams genericclioptions.IOStreams) *Env {
	return &Env{Kube: genericclioptions.NewConfigFlags(true), Streams: streams, Budget: transferplan.DefaultBudget}
}

// AddFlags registers the kubectl flags and the plan budget flags on fs (the
// root command's persistent flags).
func (e *Env) AddFlags(fs *pflag.FlagSet) {
	e.Kube.AddFlags(fs)
	gofs := flag.NewFlagSet("plan budget", flag.ContinueOnError)
	planbudget.BindFlags(gofs, &e.Budget)
	fs.AddGoFlagSet(gofs)
}

// Namespace is -n when given, else "".
func (e *Env) Namespace() string {
	if e.Kube != nil && e.Kube.Namespace != nil {
		return *e.Kube.Namespace
	}
	return ""
}

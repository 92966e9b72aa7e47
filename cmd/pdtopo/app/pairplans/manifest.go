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

package pairplans

import (
	"errors"
	"fmt"
	"io"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// FromManifest plans a manifest's PDPair as Plans (Origin empty).
func FromManifest(file, name string, stdin io.Reader, notes io.Writer, budget transferplan.Budget) (string, *Plans, error) {
	pairName, p, verdict, err := ReadResolved(file, name, stdin, notes, nil)
	if err != nil {
		return "", nil, cli.UsageErrorf("%v", err)
	}
	if verdict != nil {
		pp := &Plans{}
		if !errors.As(verdict, &pp.Incompatible) {
			return "", nil, cli.UsageErrorf("%v", verdict)
		}
		return pairName, pp, nil
	}
	pp := &Plans{Derived: p.Derived()}
	set, err := PlanPair(budget, p)
	if ee, ok := cli.AsExit(err); ok {
		return "", nil, ee
	}
	var le *transferplan.LayoutError
	switch {
	case err == nil:
		pp.Set = set
	case transferplan.IsInvalidLayout(err) && errors.As(err, &le):
		return "", nil, cli.UsageErrorf("%s: invalid PDPair: %s", file, le.Message)
	case errors.As(err, &le):
		pp.Incompatible = le
	default:
		return "", nil, cli.UsageErrorf("%v", err)
	}
	return pairName, pp, nil
}

// ReadResolved reads the manifest's PDPair and resolves its spec into
// planner input, deriving a model-aware pair's buffers (config is the
// config.json --hf-config gives, for a spec.model naming a ConfigMap); what
// it skips is noted on notes. A refusal that is a verdict on the layout
// rather than broken input (a TP the engine cannot run the model with) comes
// back as verdict.
func ReadResolved(file, name string, stdin io.Reader, notes io.Writer, config []byte) (pairName string, p engine.Pair, verdict, err error) {
	pair, err := cli.ReadPair(file, name, stdin, notes)
	if err != nil {
		return "", nil, nil, err
	}
	return ResolvePair(file, pair, config)
}

// ResolvePair is ReadResolved for a PDPair already read.
func ResolvePair(file string, pair *pdv1.PDPair, config []byte) (pairName string, p engine.Pair, verdict, err error) {
	p, err = engines.For(pair.Spec).Resolve(pair.Spec, engine.Inputs{ModelConfig: config})
	var le *transferplan.LayoutError
	switch {
	case engine.IsInputError(err) && errors.As(err, &le):
		return "", nil, nil, fmt.Errorf("%s: invalid PDPair %q: %s", file, pair.Name, le.Message)
	case p == nil:
		return pair.Name, nil, err, nil
	}
	// Any other error of an explicit spec is a planning verdict, reported
	// by the planner itself.
	return pair.Name, p, nil, nil
}

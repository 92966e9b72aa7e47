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
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Plans is a PDPair's plans and where they came from.
type Plans struct {
	// Derived is what a model-aware pair's buffers were derived from.
	Derived *pdv1.DerivedBuffers
	// Set is nil when the layout is incompatible; Incompatible then says why.
	Set          *transferplan.PlanSet
	Incompatible *transferplan.LayoutError
	// Published: Set was read (and verified) from the pair's ConfigMaps;
	// otherwise it was planned here from the spec, and Origin says why
	// (empty for a manifest's pair).
	Published bool
	Origin    string
}

// FromCluster prefers the plans the operator published for the pair's
// current generation, read back through pkg/planstore and verified against
// the hash in the pair's status, because they are what the decode agents
// load. When there are none it plans from the spec with the same planner and
// says so.
func FromCluster(ctx context.Context, c *cli.Cluster, pair *pdv1.PDPair, budget transferplan.Budget) (*Plans, error) {
	config, err := modelConfig(ctx, c, pair)
	if err != nil {
		return nil, err
	}
	p, err := engines.For(pair.Spec).Resolve(pair.Spec, engine.Inputs{ModelConfig: config})
	var le *transferplan.LayoutError
	if engine.IsInputError(err) && errors.As(err, &le) && le.Reason == transferplan.ReasonInvalidLayout {
		return nil, cli.UsageErrorf("PDPair %q: invalid spec: %s", pair.Name, le.Message)
	}
	pp := &Plans{}
	if p == nil {
		// The model could not be derived: the verdict is the derivation's.
		pp.Derived = pair.Status.Derived
		if !errors.As(err, &pp.Incompatible) {
			return nil, cli.UsageErrorf("PDPair %q: %v", pair.Name, err)
		}
		pp.Origin = "not planned: the buffers could not be derived from spec.model"
		return pp, nil
	}
	if pp.Derived = p.Derived(); pp.Derived == nil {
		pp.Derived = pair.Status.Derived
	}
	set, why, err := LoadPublished(ctx, c, pair)
	if err != nil {
		return nil, err
	}
	if set != nil {
		pp.Set, pp.Published = set, true
		pp.Origin = fmt.Sprintf("published in ConfigMap(s) %s, plan hash %s", strings.Join(pair.Status.Plan.ConfigMaps, ", "), ShortHash(pair.Status.Plan.Hash))
		return pp, nil
	}
	pp.Origin = "planned here from the spec: " + why
	pp.Set, err = PlanPair(budget, p)
	if ee, ok := cli.AsExit(err); ok {
		return nil, ee
	}
	switch {
	case err == nil:
	case errors.As(err, &le):
		pp.Incompatible = le
	default:
		return nil, cli.UsageErrorf("PDPair %q: %v", pair.Name, err)
	}
	return pp, nil
}

// LoadPublished returns the verified published plan set of the pair's current
// generation, or nil and the reason there is none to read. Only failures to
// talk to the API server are errors.
func LoadPublished(ctx context.Context, c *cli.Cluster, pair *pdv1.PDPair) (*transferplan.PlanSet, string, error) {
	st := pair.Status
	published := meta.FindStatusCondition(st.Conditions, string(pdv1.PDPairPlansPublished))
	switch {
	case st.ObservedGeneration == 0 && len(st.Conditions) == 0:
		return nil, "the PDPair has no status (is the operator running?)", nil
	case st.ObservedGeneration != pair.Generation:
		return nil, fmt.Sprintf("the operator has observed generation %d, the spec is at generation %d", st.ObservedGeneration, pair.Generation), nil
	case published == nil || published.Status != metav1.ConditionTrue || st.Plan == nil || len(st.Plan.ConfigMaps) == 0:
		if published != nil {
			return nil, fmt.Sprintf("not published (%s=%s, %s: %s)", published.Type, published.Status, published.Reason, published.Message), nil
		}
		return nil, "not published", nil
	}
	objects := make([]planstore.Object, 0, len(st.Plan.ConfigMaps))
	for _, name := range st.Plan.ConfigMaps {
		cm, err := c.ConfigMap(ctx, pair.Namespace, name)
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Sprintf("published ConfigMap %s is missing", name), nil
			}
			return nil, "", cli.ClusterErrorf("reading ConfigMap %s/%s: %v", pair.Namespace, name, err)
		}
		objects = append(objects, planstore.Object{Name: cm.Name, Data: cm.Data, BinaryData: cm.BinaryData})
	}
	// LoadPlanSet checks every rank against the index and the index's plan
	// hash; the index's hash must then be the one the status announces.
	set, err := planstore.LoadPlanSet(objects)
	if err != nil {
		return nil, fmt.Sprintf("the published plans are unreadable: %v", err), nil
	}
	idx, err := planstore.LoadIndex(objects)
	if err != nil {
		return nil, fmt.Sprintf("the published plan index is unreadable: %v", err), nil
	}
	if idx.PlanHash != st.Plan.Hash {
		return nil, fmt.Sprintf("the published plans have hash %s but the status records %s", ShortHash(idx.PlanHash), ShortHash(st.Plan.Hash)), nil
	}
	return set, "", nil
}

// ShortHash is a plan hash's first 12 digits, as git shows commits.
func ShortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// modelConfig reads the config.json a model-aware pair's
// spec.model.configMapKeyRef names (nil for other pairs, and when it cannot
// be read: Resolve then says so).
func modelConfig(ctx context.Context, c *cli.Cluster, pair *pdv1.PDPair) ([]byte, error) {
	if pair.Spec.Model == nil || pair.Spec.Model.ConfigMapKeyRef == nil {
		return nil, nil
	}
	ref := pair.Spec.Model.ConfigMapKeyRef
	cm, err := c.ConfigMap(ctx, pair.Namespace, ref.Name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, cli.ClusterErrorf("reading ConfigMap %s/%s: %v", pair.Namespace, ref.Name, err)
	}
	if v, ok := cm.Data[ref.Key]; ok {
		return []byte(v), nil
	}
	return cm.BinaryData[ref.Key], nil
}

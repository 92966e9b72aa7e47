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

package webhooks

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
)

// fetchPair reads the PDPair a pod names, through the manager's cache first
// and the API server on a miss: a pair created a moment before its pods may
// not have reached the cache yet, and refusing it would only delay the pods.
func (p *PodInjector) fetchPair(ctx context.Context, key client.ObjectKey) (*pdv1.PDPair, *refusal, error) {
	var pair pdv1.PDPair
	err := p.Reader.Get(ctx, key, &pair)
	if apierrors.IsNotFound(err) && p.APIReader != nil {
		err = p.APIReader.Get(ctx, key, &pair)
	}
	if apierrors.IsNotFound(err) {
		return nil, refuse(RefusePDPairNotFound, "PDPair %s does not exist in namespace %s; create it first (the pod's label %s names it)",
			key.Name, key.Namespace, pdv1.LabelPDPair), nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading PDPair %s: %w", key, err)
	}
	return &pair, nil, nil
}

// pairVerdict admits pods only for a pair whose current generation is
// compatible and has published plans: anything else gives an agent that
// never becomes ready, which is better said now than found later. The one
// exception is a contract pair waiting for its decode contract from the
// decode engines: their pods (and agents) must run for the operator to
// read it; their agents load the plans once they are published.
func pairVerdict(pair *pdv1.PDPair) *refusal {
	compatible := currentCondition(pair, pdv1.PDPairLayoutCompatible)
	if compatible != nil && compatible.Status == metav1.ConditionUnknown && compatible.Reason == string(pdv1.ReasonContractPending) &&
		engine.DecodeContractFromAgents(engines.For(pair.Spec), pair.Spec) {
		return nil
	}
	if compatible != nil && compatible.Status == metav1.ConditionFalse {
		return refuse(RefusePDPairIncompatible, "PDPair %s is incompatible (%s): %s", pair.Name, compatible.Reason, compatible.Message)
	}
	ready := currentCondition(pair, pdv1.PDPairReady)
	switch {
	case ready == nil:
		return refuse(RefusePDPairNotReady, "PDPair %s generation %d has not been planned by the operator yet (status describes generation %d); the pod can be created once it is Ready",
			pair.Name, pair.Generation, pair.Status.ObservedGeneration)
	case ready.Status != metav1.ConditionTrue:
		return refuse(RefusePDPairNotReady, "PDPair %s is not Ready (%s): %s", pair.Name, ready.Reason, ready.Message)
	}
	return nil
}

// currentCondition is the condition of the given type if it describes the
// pair's current generation, else nil.
func currentCondition(pair *pdv1.PDPair, t pdv1.PDPairConditionType) *metav1.Condition {
	c := meta.FindStatusCondition(pair.Status.Conditions, string(t))
	if c == nil || c.ObservedGeneration != pair.Generation {
		return nil
	}
	return c
}

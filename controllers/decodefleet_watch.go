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

package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// defaultFleetRecheck is FleetRecheckInterval's default.
const defaultFleetRecheck = 10 * time.Second

// decodePodSelector selects decode pods of any pair: the manager caches
// only these, never every pod in the cluster.
func decodePodSelector() labels.Selector {
	hasPair, err := labels.NewRequirement(pdv1.LabelPDPair, selection.Exists, nil)
	if err != nil { // constant, valid keys: cannot happen
		panic(err)
	}
	isDecode, err := labels.NewRequirement(pdv1.LabelRole, selection.Equals, []string{pdv1.RoleDecode})
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*hasPair, *isDecode)
}

// pairOfDecodePod maps a decode pod to the PDPair its label names.
func pairOfDecodePod(_ context.Context, obj client.Object) []reconcile.Request {
	l := obj.GetLabels()
	if l[pdv1.LabelRole] != pdv1.RoleDecode || l[pdv1.LabelPDPair] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: l[pdv1.LabelPDPair]}}}
}

// decodePodChange passes pod events that can change the fleet status:
// creation, deletion, and updates of the labels, the pod IP, the deletion
// mark, or the agent's readiness. The kubelet rewrites pod status often
// (every container's state); the rest is noise for this controller.
type decodePodChange struct{ predicate.Funcs }

func (decodePodChange) Update(e event.UpdateEvent) bool {
	was, ok1 := e.ObjectOld.(*corev1.Pod)
	now, ok2 := e.ObjectNew.(*corev1.Pod)
	if !ok1 || !ok2 {
		return true
	}
	wasReady, wasWhy := agentReadiness(was)
	nowReady, nowWhy := agentReadiness(now)
	return wasReady != nowReady || wasWhy != nowWhy ||
		was.Status.PodIP != now.Status.PodIP ||
		was.Status.Phase != now.Status.Phase ||
		was.DeletionTimestamp.IsZero() != now.DeletionTimestamp.IsZero() ||
		was.Labels[pdv1.LabelPDPair] != now.Labels[pdv1.LabelPDPair] ||
		was.Labels[pdv1.LabelRole] != now.Labels[pdv1.LabelRole]
}

// currentPlanHash is the plan agents should run: the one just published.
func currentPlanHash(out *planOutcome, pub publication) string {
	if pub.kept != nil {
		return pub.kept.Hash
	}
	if !pub.published {
		return ""
	}
	return out.hash
}

func fleetOrNil(obs fleetObservation, err error) *fleetObservation {
	if err != nil {
		return nil
	}
	return &obs
}

// fleetRecheck is when to look at the fleet again: soon while some agent
// lags (nothing the operator watches changes when an agent loads a plan),
// never when all are current or there are no pods.
func (r *PDPairReconciler) fleetRecheck(obs fleetObservation) time.Duration {
	if obs.status.Pods == 0 || obs.status.AgentsCurrent == obs.status.Pods {
		return 0
	}
	if r.FleetRecheckInterval > 0 {
		return r.FleetRecheckInterval
	}
	return defaultFleetRecheck
}

func minPositive(a, b time.Duration) time.Duration {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

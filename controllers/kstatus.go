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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// GitOps tools (Flux, Argo CD, kpt) read a custom resource's health with the
// kstatus conventions: Reconciling=True means in progress, Stalled=True means
// failed, and both are absent once the object is current. A PDPair whose
// layout is incompatible or whose plans are over budget would otherwise look
// healthy to them: its status is written and its generation observed.

// setKStatus sets Stalled while only a change to the spec (or to someone
// else's object in the way) can make progress, and Reconciling while a
// transient failure is being retried; each is removed when it stops holding.
func setKStatus(pair *pdv1.PDPair, out *planOutcome, pub publication) {
	if reason, message, stalled := stalledBecause(out, pub); stalled {
		setCondition(pair, pdv1.PDPairStalled, true, reason, message)
	} else {
		meta.RemoveStatusCondition(&pair.Status.Conditions, string(pdv1.PDPairStalled))
	}
	switch {
	case pub.retry != nil:
		setCondition(pair, pdv1.PDPairReconciling, true, pub.reason,
			"retrying with backoff: "+pub.message)
	case out.pending:
		setCondition(pair, pdv1.PDPairReconciling, true, out.layoutReason, out.layoutMessage)
	default:
		meta.RemoveStatusCondition(&pair.Status.Conditions, string(pdv1.PDPairReconciling))
	}
}

// stalledBecause says why the PDPair cannot become Ready without a change
// from outside: an incompatible layout, plans over budget or not encodable,
// or a ConfigMap of someone else's under a plan ConfigMap's name.
func stalledBecause(out *planOutcome, pub publication) (reason pdv1.PDPairConditionReason, message string, stalled bool) {
	switch {
	case out.pending:
		return "", "", false // the live engines are read again: no spec change needed
	case !out.compatible:
		return out.layoutReason, out.layoutMessage, true
	case pub.published, pub.retry != nil, out.noPlans:
		// An engine that loads no plans (vllm, sglang) is Ready on the
		// verdict alone: PlansPublished=False (EngineLoadsNoPlans) is not a
		// failure.
		return "", "", false
	default:
		return pub.reason, pub.message, true
	}
}

// recordPublicationChange emits an event when PlansPublished changes status
// or reason (including the first time it is set); a Warning unless the plans
// are published. A publication failure that persists with the same reason
// is reported once, not on every retry.
func (r *PDPairReconciler) recordPublicationChange(before, after *pdv1.PDPair) {
	was := meta.FindStatusCondition(before.Status.Conditions, string(pdv1.PDPairPlansPublished))
	now := meta.FindStatusCondition(after.Status.Conditions, string(pdv1.PDPairPlansPublished))
	if now == nil || (was != nil && was.Status == now.Status && was.Reason == now.Reason) {
		return
	}
	if now.Reason == string(pdv1.ReasonLayoutIncompatible) || now.Reason == string(pdv1.ReasonContractPending) {
		return // the LayoutCompatible event already says why
	}
	eventType := corev1.EventTypeNormal
	if now.Status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(after, nil, eventType, now.Reason, "Publish", "%s", truncate(fmt.Sprintf("generation %d: %s", after.Generation, now.Message), 1000))
}

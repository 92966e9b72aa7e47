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
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// applyStatus computes the status from what planning and publishing did and
// writes it only if it differs from what the object already says. The write
// goes to the status subresource, which does not bump the generation, so the
// PDPair's own watch (generation predicate) does not reconcile it again.
// A nil fleet (the pods could not be listed) leaves the fleet status as it was.
func (r *PDPairReconciler) applyStatus(ctx context.Context, pair *pdv1.PDPair, out *planOutcome, pub publication, obs observations) error {
	before := pair.DeepCopy()
	pair.Status.ObservedGeneration = pair.Generation
	compatible := metav1.ConditionFalse
	switch {
	case out.pending:
		compatible = metav1.ConditionUnknown
	case out.compatible:
		compatible = metav1.ConditionTrue
	}
	setConditionStatus(pair, pdv1.PDPairLayoutCompatible, compatible, out.layoutReason, out.layoutMessage)
	setCondition(pair, pdv1.PDPairPlansPublished, pub.published, pub.reason, pub.message)
	setReady(pair, out, pub)
	setKStatus(pair, out, pub)
	applyLivePrefill(pair, obs.livePrefill)
	pair.Status.Plan = planSummary(out, pub)
	pair.Status.RankMap = out.rankMap
	pair.Status.Derived = out.derived
	pair.Status.Contracts = obs.contracts
	if obs.fleet != nil {
		setFleetStatus(pair, *obs.fleet)
	}
	setPlanNamesClear(pair, obs.foreign)
	setGenerations(pair, obs.generations)
	key := client.ObjectKeyFromObject(pair)
	// Remembered before the write, so that its echo, which may arrive before
	// Patch returns, is recognised as the manager's own.
	r.written.remember(key, &pair.Status)
	if obs.foreign.listed {
		r.foreign.set(key, foreignNames(obs.foreign.objects))
	}
	if equality.Semantic.DeepEqual(before.Status, pair.Status) {
		return nil
	}
	if err := r.Status().Patch(ctx, pair, client.MergeFrom(before)); err != nil {
		r.written.forget(key)
		return err
	}
	r.recordCompatibilityChange(before, pair)
	r.recordPublicationChange(before, pair)
	r.recordLivePrefillChange(before, pair)
	return nil
}

// observations are what a reconcile saw besides its own plans: the decode
// fleet (nil when its pods could not be listed), ConfigMaps of someone
// else's under plan names, and where a contract pair's contracts come from.
type observations struct {
	fleet     *fleetObservation
	foreign   foreignObservation
	contracts *pdv1.ContractsStatus
	// generations are status.generations and RolloutCompatible.
	generations generationsObservation
	// livePrefill is the running prefill as read live, nil for a pair
	// whose prefill is not read (liveprefill.go).
	livePrefill *livePrefillObservation
}

func setReady(pair *pdv1.PDPair, out *planOutcome, pub publication) {
	switch {
	case out.pending:
		setCondition(pair, pdv1.PDPairReady, false, pdv1.ReasonContractPending,
			fmt.Sprintf("no verdict yet (%s): %s", out.layoutReason, out.layoutMessage))
	case !out.compatible:
		setCondition(pair, pdv1.PDPairReady, false, pdv1.ReasonLayoutIncompatible,
			fmt.Sprintf("the layout is incompatible (%s): %s", out.layoutReason, out.layoutMessage))
	case out.noPlans:
		setCondition(pair, pdv1.PDPairReady, true, pdv1.ReasonReady,
			fmt.Sprintf("the layout is compatible under engine %s's rules, which moves the KV cache itself: there are no plans to publish", pair.Spec.EngineOrDefault()))
	case !pub.published:
		setCondition(pair, pdv1.PDPairReady, false, pdv1.ReasonPlansNotPublished,
			fmt.Sprintf("the layout is compatible but its plans are not published (%s): %s", pub.reason, pub.message))
	default:
		setCondition(pair, pdv1.PDPairReady, true, pdv1.ReasonReady,
			fmt.Sprintf("plans for generation %d are published in %d ConfigMaps", pair.Generation, len(pub.configMaps)))
	}
}

// planSummary describes the published plans; there is none while nothing is
// published, so the status never shows plans an agent cannot load.
func planSummary(out *planOutcome, pub publication) *pdv1.PlanSummary {
	if pub.kept != nil {
		return pub.kept
	}
	if !pub.published {
		return nil
	}
	s := out.summary
	return &pdv1.PlanSummary{
		Kind:                    string(s.Kind),
		DecodeTPRanks:           int32(out.decodeRanks),
		MinTargetsPerDecodeRank: int32(s.MinTargets),
		MaxTargetsPerDecodeRank: int32(s.MaxTargets),
		PrefillFanOut:           int32s(s.PrefillFanOut),
		MaxPrefillFanOut:        int32(s.MaxPrefillFanOut),
		IdlePrefillTPRanks:      int32s(s.IdlePrefillRanks),
		FragmentCount:           int64(s.Fragments),
		FragmentsPerPage:        int32(s.FragmentsPerPage),
		PageCost:                s.PageCost,
		Hash:                    out.hash,
		IndexSHA256:             pub.indexSHA256,
		PublishedBytes:          pub.bytes,
		ConfigMaps:              pub.configMaps,
	}
}

func int32s(xs []int) []int32 {
	if len(xs) == 0 {
		return nil
	}
	out := make([]int32, len(xs))
	for i, x := range xs {
		out[i] = int32(x)
	}
	return out
}

// recordCompatibilityChange emits an event when LayoutCompatible changes
// status or reason (including the first time it is set).
func (r *PDPairReconciler) recordCompatibilityChange(before, after *pdv1.PDPair) {
	was := meta.FindStatusCondition(before.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
	now := meta.FindStatusCondition(after.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
	if now == nil || (was != nil && was.Status == now.Status && was.Reason == now.Reason) {
		return
	}
	eventType := corev1.EventTypeNormal
	if now.Status == metav1.ConditionFalse {
		eventType = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(after, nil, eventType, now.Reason, "Plan", "generation %d: %s", after.Generation, truncate(now.Message, 900))
}

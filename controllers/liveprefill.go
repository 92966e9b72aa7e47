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
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/engine"
)

// The running prefill, read live. An engine whose prefill tells its layout
// (engine.LivePrefillTeller: SGLang's bootstrap server answers decode's
// handshake with its parallel info) is read at spec.prefill.bootstrapAddress
// by the machinery of live contracts (livecontracts.go): in the background,
// through the fair slots, with the bootstrap client's bounds and allowlist,
// a context per read cancelled when the address changes or the pair goes,
// failures reported by their fixed outcome. What is kept is the decoded
// layout only. The verdict stays the spec's: a prefill that differs makes
// LivePrefillMatches False and the pair not Ready (the published verdict
// does not describe what runs); one that cannot be read changes nothing
// but LivePrefillMatches, which is then Unknown.

// livePrefillRole is the live source's role beside "prefill" and "decode"
// contracts: a pair may have both.
const livePrefillRole = "prefill-layout"

// maxLiveDifferences is the API's bound on status.livePrefill.differences.
const maxLiveDifferences = 8

// livePrefillObservation is what a reconcile saw of the running prefill.
type livePrefillObservation struct {
	status *pdv1.LivePrefillStatus
	// condition is LivePrefillMatches.
	condition metav1.ConditionStatus
	reason    pdv1.PDPairConditionReason
	message   string
	// requeue is when to look again: the refresh, or the retry while no
	// answer is had.
	requeue time.Duration
}

// observeLivePrefill reads the running prefill of a pair whose engine's
// prefill tells its layout and which names spec.prefill.bootstrapAddress;
// nil for any other pair (and its earlier source, if any, is dropped).
func (r *PDPairReconciler) observeLivePrefill(pair *pdv1.PDPair) *livePrefillObservation {
	teller, ok := engineFor(pair).(engine.LivePrefillTeller)
	addr := pair.Spec.Prefill.BootstrapAddress
	if !ok || addr == "" {
		r.live.forgetRole(types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}, livePrefillRole)
		return nil
	}
	st := r.live.observe(pair, livePrefillRole, addr, readLivePrefill(r.live.bootstrap, teller, addr))
	query, _ := teller.LivePrefillQuery()
	obs := &livePrefillObservation{status: &pdv1.LivePrefillStatus{From: truncate("http://"+addr+query, maxContractFrom)}, requeue: r.live.refresh}
	if st.good == nil {
		obs.requeue = r.live.retry
		obs.condition, obs.reason = metav1.ConditionUnknown, pdv1.ReasonLivePrefillNotRead
		obs.status.Message = describeLiveFailure(st)
		obs.message = obs.status.Message + "; the verdict is the spec's alone"
		return obs
	}
	live := *st.good.layout
	fillLivePrefill(obs.status, st.good, live)
	cmp := teller.CompareLivePrefill(pair.Spec, live)
	for _, d := range cmp.Differences[:min(len(cmp.Differences), maxLiveDifferences)] {
		obs.status.Differences = append(obs.status.Differences, pdv1.LivePrefillDifference{Field: d.Field, Name: d.Name, Spec: d.Spec, Live: d.Live})
	}
	if st.failure != nil {
		obs.status.Message = describeLiveFailure(st)
	}
	read := fmt.Sprintf("read from %s at %s", st.good.from, st.good.since.UTC().Format(time.RFC3339))
	if len(cmp.Differences) == 0 {
		obs.condition, obs.reason = metav1.ConditionTrue, pdv1.ReasonLivePrefillMatches
		obs.message = fmt.Sprintf("the running prefill is the one spec.prefill describes: %s (%s)", describeLivePrefill(live), read)
	} else {
		obs.condition, obs.reason = metav1.ConditionFalse, pdv1.ReasonLivePrefillDiffers
		obs.message = describeDifferences(cmp, read)
	}
	if obs.status.Message != "" {
		obs.message += "; " + obs.status.Message
	}
	return obs
}

// readLivePrefill is the running prefill's source: its bootstrap server,
// asked what the engine asks and decoded by the engine. An answer the
// engine refuses is Malformed, reported by the engine's code (never the
// answer's words).
func readLivePrefill(client *livecontract.Client, teller engine.LivePrefillTeller, addr string) liveReader {
	query, limit := teller.LivePrefillQuery()
	return func(ctx context.Context) (*fetchedContract, error) {
		body, url, err := client.EngineAnswer(ctx, addr, query, limit)
		if err != nil {
			return nil, err
		}
		live, err := teller.DecodeLivePrefill(body)
		if err != nil {
			code := "does not decode"
			var le *engine.LivePrefillError
			if errors.As(err, &le) {
				code = "is not the engine's parallel info: " + le.Code
			}
			return nil, livecontract.Malformed(url, body, code, err.Error())
		}
		return &fetchedContract{from: url, layout: &live}, nil
	}
}

// fillLivePrefill copies what was read into the status.
func fillLivePrefill(s *pdv1.LivePrefillStatus, good *liveRead, live engine.LivePrefill) {
	since := metav1.NewTime(good.since)
	s.From, s.ObservedAt = truncate(good.from, maxContractFrom), &since
	s.AttentionTensorParallelSize, s.DataParallelSize = int32(live.AttentionTP), int32(live.DP)
	s.PipelineParallelSize, s.ContextParallelSize = int32(live.PP), int32(live.CP)
	s.TokensPerPage, s.KVCacheDtype = int32(live.PageSize), live.KVCacheDtype
}

// describeLivePrefill says what the prefill reported.
func describeLivePrefill(l engine.LivePrefill) string {
	page, dtype := "none reported", "none reported"
	if l.PageSize != 0 {
		page = fmt.Sprint(l.PageSize)
	}
	if l.KVCacheDtype != "" {
		dtype = l.KVCacheDtype
	}
	return fmt.Sprintf("attention TP %d, DP %d, PP %d, CP %d, page size %s, kv_cache_dtype %s", l.AttentionTP, l.DP, l.PP, l.CP, page, dtype)
}

// describeDifferences is LivePrefillMatches=False's message: each value
// with both numbers and the field, then the fix.
func describeDifferences(cmp engine.LiveComparison, read string) string {
	parts := make([]string, 0, len(cmp.Differences))
	for _, d := range cmp.Differences {
		where := "the API has no field for it: pairs are judged at 1"
		if d.Field != "" {
			where = "spec." + d.Field
		}
		parts = append(parts, fmt.Sprintf("%s is %s running, %s in the spec (%s)", d.Name, d.Live, d.Spec, where))
	}
	fix := "point prefill.bootstrapAddress at the prefill the spec describes, or restart the prefill as the spec says"
	if len(cmp.SpecFix) > 0 {
		set := make([]string, 0, len(cmp.SpecFix))
		for _, f := range cmp.SpecFix {
			set = append(set, "spec."+f.Field+": "+f.Value)
		}
		fix = "set " + strings.Join(set, ", ") + " if the running prefill is the one wanted (the verdict is then made for it), or " + fix
	}
	return fmt.Sprintf("the running prefill is not the one spec.prefill describes: %s (%s). LayoutCompatible judges the spec; the engine's decode meets the running prefill. Fix: %s",
		strings.Join(parts, "; "), read, fix)
}

// applyLivePrefill writes the observation into the status: the
// LivePrefillMatches condition and status.livePrefill, and, when a prefill
// that differs runs beside a compatible spec, Ready False and Stalled
// (only a change of the spec or of the prefill helps).
func applyLivePrefill(pair *pdv1.PDPair, obs *livePrefillObservation) {
	pair.Status.LivePrefill = nil
	if obs == nil {
		meta.RemoveStatusCondition(&pair.Status.Conditions, string(pdv1.PDPairLivePrefillMatches))
		return
	}
	pair.Status.LivePrefill = obs.status
	setConditionStatus(pair, pdv1.PDPairLivePrefillMatches, obs.condition, obs.reason, obs.message)
	if obs.condition != metav1.ConditionFalse || !meta.IsStatusConditionTrue(pair.Status.Conditions, string(pdv1.PDPairReady)) {
		return
	}
	msg := "the layout is compatible as the spec gives it, but " + obs.message
	setCondition(pair, pdv1.PDPairReady, false, pdv1.ReasonLivePrefillDiffers, msg)
	setCondition(pair, pdv1.PDPairStalled, true, pdv1.ReasonLivePrefillDiffers, msg)
}

// recordLivePrefillChange emits an Event when LivePrefillMatches turns
// False (a Warning: what runs is not what was judged) or leaves False.
func (r *PDPairReconciler) recordLivePrefillChange(before, after *pdv1.PDPair) {
	was := meta.FindStatusCondition(before.Status.Conditions, string(pdv1.PDPairLivePrefillMatches))
	now := meta.FindStatusCondition(after.Status.Conditions, string(pdv1.PDPairLivePrefillMatches))
	wasFalse := was != nil && was.Status == metav1.ConditionFalse
	switch {
	case now != nil && now.Status == metav1.ConditionFalse && !wasFalse:
		r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, now.Reason, "ReadLivePrefill", "%s", truncate(now.Message, 1000))
	case wasFalse && now != nil && now.Status == metav1.ConditionTrue:
		r.Recorder.Eventf(after, nil, corev1.EventTypeNormal, now.Reason, "ReadLivePrefill", "%s", truncate(now.Message, 1000))
	}
}

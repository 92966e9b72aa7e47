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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// During a rollout instances of a role's old and new layouts serve side by
// side, so the publication keeps the plan sets published before the
// current one (planstore.EncodeSets): decode agents pick a set per
// prefill and load the sets of their own decode layout. The current set
// is the spec's, first, and status.plan.hash stays its hash; the earlier
// ones were each the current set of an earlier generation (servesSet
// says which are still served), and the cross pairs of a rollout that
// changed both roles (old prefill × new decode) are planned beside them
// (crossplans.go). Every set published is one the engine accepts: a
// refused cross pair is named, never published.
//
// The sets are kept in memory as they were published (setMemory); after a
// manager restart they are read back from the pair's own ConfigMaps and
// kept only when verified end to end (planstore.SplitSets) and vouched for
// by the operator: the hash status.plan names, or every set of a sets
// index whose plansets.sig the manager's own key signed for this pair.

// setMemory remembers, per pair, the sets last published, current first.
type setMemory = pairMemory[[]planstore.SplitSet]

// publishedSets is what to publish for the pair: the current set's objects,
// the earlier sets of the generations still served and the cross pairs'
// plans (crossplans.go), as one publication, and the cross pairs as
// planned.
func (r *PDPairReconciler) publishedSets(ctx context.Context, pair *pdv1.PDPair, out *planOutcome, owned map[string]*corev1.ConfigMap, model modelConfig) (setsPublication, error) {
	key := types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}
	earlier, ok := r.plans.published.get(key, pair.UID)
	if !ok {
		earlier = r.readBackSets(pair, owned)
	}
	current, err := planstore.LoadIndex(out.objects[:1])
	if err != nil {
		return setsPublication{}, err
	}
	cur := planstore.SplitSet{PlanHash: out.hash, Layout: current.Layout, Objects: out.objects}
	gens := []planstore.SplitSet{cur}
	for _, s := range earlier {
		if s.PlanHash != out.hash && servesSet(pair, current.Layout, s) {
			gens = append(gens, s)
		}
	}
	crosses, err := r.planCrosses(ctx, pair, model, gens)
	if err != nil {
		return setsPublication{}, err
	}
	rest := gens[1:]
	for _, c := range crosses {
		if c.published() {
			rest = append(rest, planstore.SplitSet{PlanHash: c.out.hash, Layout: c.record, Objects: c.out.objects})
		}
	}
	rest = orderEarlier(pair, rest)
	if len(rest) == 0 { // the usual case: the encoded set as the plan cache holds it
		r.plans.published.put(key, pair.UID, []planstore.SplitSet{cur})
		return setsPublication{SetsPublication: planstore.SetsPublication{Objects: out.objects, Published: []string{out.hash}}, crosses: crosses}, nil
	}
	pub, err := r.encodeSets(key, pair, cur, rest)
	if err != nil {
		return setsPublication{}, err
	}
	kept := []planstore.SplitSet{cur}
	layouts := map[string]transferplan.LayoutRecord{}
	for _, s := range rest {
		layouts[s.PlanHash] = s.Layout
		if slices.Contains(pub.Published, s.PlanHash) {
			kept = append(kept, s)
		}
	}
	r.plans.published.put(key, pair.UID, kept)
	return setsPublication{SetsPublication: pub, crosses: crosses, layouts: layouts}, nil
}

// encodedSets is a pair's last EncodeSets: its answer for the sets of
// those plan hashes, in that order.
type encodedSets struct {
	hashes []string
	pub    planstore.SetsPublication
}

// encodeSets is EncodeSets of cur and rest, answered from the pair's last
// one when the same sets come in the same order: the reconciles the
// fleet's probes cause mid-rollout publish what they published before,
// and packing up to MaxPlanSets sets again each time is work done twice.
// A plan hash names a set's plans, so equal hashes are equal objects.
func (r *PDPairReconciler) encodeSets(key types.NamespacedName, pair *pdv1.PDPair, cur planstore.SplitSet, rest []planstore.SplitSet) (planstore.SetsPublication, error) {
	hashes := []string{cur.PlanHash}
	in := [][]planstore.Object{cur.Objects}
	for _, s := range rest {
		hashes = append(hashes, s.PlanHash)
		in = append(in, s.Objects)
	}
	if last, ok := r.plans.encoded.get(key, pair.UID); ok && slices.Equal(last.hashes, hashes) {
		return last.pub, nil
	}
	pub, err := planstore.EncodeSets(pair.Name, in)
	if err == nil {
		r.plans.encoded.put(key, pair.UID, encodedSets{hashes: hashes, pub: pub})
	}
	return pub, err
}

// setsPublication is a publication with what the message about it says:
// the cross pairs as planned and the layouts of the sets offered.
type setsPublication struct {
	planstore.SetsPublication
	crosses []crossPlan
	layouts map[string]transferplan.LayoutRecord
}

// orderEarlier orders the sets published after the current one, which
// EncodeSets leaves out from the last when they pass planstore.MaxPlanSets
// or the shard budget: first the sets whose prefill layout and decode
// layout both have instances now (the status's counts: rooms between them
// happen now, and fail without the set), then those only in their grace
// (instances nobody saw lately: the ones to lose when space is short);
// within each, the generations' own sets (in the order they were
// published) before the cross pairs.
func orderEarlier(pair *pdv1.PDPair, sets []planstore.SplitSet) []planstore.SplitSet {
	out := slices.Clone(sets)
	rank := func(s planstore.SplitSet) int {
		if layoutsInUse(pair, s.Layout) {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(out, func(a, b planstore.SplitSet) int { return rank(a) - rank(b) })
	return out
}

// layoutsInUse reports whether both of a set's layouts have instances
// now: the spec's own layouts (what the workload rolls to), or a
// generation's whose counts are not zero.
func layoutsInUse(pair *pdv1.PDPair, rec transferplan.LayoutRecord) bool {
	prefill := rec.Prefill == parallelismOf(pair.Spec.Prefill)
	decode := rec.Decode == parallelismOf(pair.Spec.Decode)
	for _, g := range pair.Status.Generations {
		prefill = prefill || (g.PrefillInstances > 0 && parallelismOf(g.Prefill) == rec.Prefill)
		decode = decode || (g.DecodePods+g.Agents > 0 && parallelismOf(g.Decode) == rec.Decode)
	}
	return prefill && decode
}

// servesSet says whether an earlier set is still served: it is the set of
// a generation status.generations keeps (its planHash). A generation's own
// pair goes by its hash alone: an edit that keeps both layouts (other
// buffers) continues the generation with a new hash, and the set it
// replaced must go. A cross pair's set is not kept here: it is planned
// again (crossplans.go, from the cache), so that a cross pair the engine
// now refuses is never carried over. The status read here is the one
// before this reconcile, so on the edit that starts a rollout the
// generation being replaced is still listed (as current) and its set
// stays. A pair whose status lists no generations yet (written by an
// operator older than status.generations) keeps an earlier set while it
// shares one role's layout with the current one. planstore.MaxPlanSets and
// the shard budget bound what is kept (orderEarlier).
func servesSet(pair *pdv1.PDPair, current transferplan.LayoutRecord, s planstore.SplitSet) bool {
	gens := pair.Status.Generations
	if len(gens) == 0 {
		return s.Layout.Prefill == current.Prefill || s.Layout.Decode == current.Decode
	}
	return slices.ContainsFunc(gens, func(g pdv1.PlanGeneration) bool { return g.PlanHash != "" && g.PlanHash == s.PlanHash })
}

// readBackSets reads the sets published before the manager started from
// the pair's own ConfigMaps, keeping those the operator vouches for.
func (r *PDPairReconciler) readBackSets(pair *pdv1.PDPair, owned map[string]*corev1.ConfigMap) []planstore.SplitSet {
	objects := make([]planstore.Object, 0, len(owned))
	for _, cm := range owned {
		objects = append(objects, planstore.Object{Name: cm.Name, Data: cm.Data, BinaryData: cm.BinaryData})
	}
	sets, err := planstore.SplitSets(objects)
	if err != nil {
		return nil // nothing readable: the current set alone is published
	}
	vouched := r.signedSets(pair, owned[planstore.IndexConfigMapName(pair.Name)])
	var out []planstore.SplitSet
	for _, s := range sets {
		if (pair.Status.Plan != nil && s.PlanHash == pair.Status.Plan.Hash) || vouched {
			out = append(out, s)
		}
	}
	return out
}

// signedSets reports whether the index ConfigMap's sets index is signed by
// this manager's key for this pair instance.
func (r *PDPairReconciler) signedSets(pair *pdv1.PDPair, index *corev1.ConfigMap) bool {
	if r.Signer == nil || index == nil {
		return false
	}
	keys := planstore.PublicKeys{planstore.KeyID(r.Signer.PublicKey()): r.Signer.PublicKey()}
	st, err := keys.DecodeSetsSignature([]byte(index.Data[planstore.SetsSignatureKey]))
	if err != nil || st.Namespace != pair.Namespace || st.PDPair != pair.Name || st.UID != string(pair.UID) {
		return false
	}
	sum := sha256.Sum256([]byte(index.Data[planstore.SetsKey]))
	return hex.EncodeToString(sum[:]) == st.IndexSHA256
}

// describeSets is the part of PlansPublished's message about the sets
// published beside the current one, those left out, and the cross pairs
// not published.
func describeSets(pub setsPublication) string {
	s := ""
	if n := len(pub.Published) - 1; n > 0 {
		s = fmt.Sprintf("; %d earlier plan sets still published for the layouts of a rollout (%s)", n, shortHashes(pub.Published[1:]))
	}
	if len(pub.Dropped) > 0 {
		var named []string
		for _, h := range pub.Dropped {
			named = append(named, fmt.Sprintf("%s × decode %s (%s)", planstore.DescribePrefill(pub.layouts[h]), planstore.DescribeParallelism(pub.layouts[h].Decode), short(h)))
		}
		s += fmt.Sprintf("; %d sets left out, past %d sets or the shard budget: %s", len(pub.Dropped), planstore.MaxPlanSets, strings.Join(named, ", "))
	}
	for _, c := range pub.crosses {
		switch {
		case c.notPlanned != "":
			s += fmt.Sprintf("; cross pair %s %s", c.pair, c.notPlanned)
		case !c.published():
			s += fmt.Sprintf("; cross pair %s not published: %s", c.pair, truncate(c.refusal(), 300))
		}
	}
	return s
}

func shortHashes(hashes []string) string {
	out := ""
	for i, h := range hashes {
		if i > 0 {
			out += ", "
		}
		out += short(h)
	}
	return out
}

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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"

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
// ones were each the current set of an earlier generation, so every pair
// published is one that was judged compatible, never a refused one.
// Which earlier sets are still served is servesSet's question; cross
// pairs never published (old prefill × new decode when both roles change)
// are not planned here.
//
// The sets are kept in memory as they were published (setMemory); after a
// manager restart they are read back from the pair's own ConfigMaps and
// kept only when verified end to end (planstore.SplitSets) and vouched for
// by the operator: the hash status.plan names, or every set of a sets
// index whose plansets.sig the manager's own key signed for this pair.

// setMemory remembers, per pair, the sets last published, current first.
type setMemory struct {
	mu   sync.Mutex
	sets map[types.NamespacedName]rememberedSets
}

type rememberedSets struct {
	uid  types.UID
	sets []planstore.SplitSet
}

func (m *setMemory) get(key types.NamespacedName, uid types.UID) ([]planstore.SplitSet, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.sets[key]
	return r.sets, ok && r.uid == uid
}

func (m *setMemory) put(key types.NamespacedName, uid types.UID, sets []planstore.SplitSet) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sets == nil {
		m.sets = map[types.NamespacedName]rememberedSets{}
	}
	m.sets[key] = rememberedSets{uid: uid, sets: sets}
}

func (m *setMemory) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sets, key)
}

// publishedSets is what to publish for the pair: the current set's objects
// and the earlier sets still served, as one publication.
func (r *PDPairReconciler) publishedSets(pair *pdv1.PDPair, out *planOutcome, owned map[string]*corev1.ConfigMap) (planstore.SetsPublication, error) {
	key := types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}
	earlier, ok := r.plans.published.get(key, pair.UID)
	if !ok {
		earlier = r.readBackSets(pair, owned)
	}
	current, err := planstore.LoadIndex(out.objects[:1])
	if err != nil {
		return planstore.SetsPublication{}, err
	}
	in := [][]planstore.Object{out.objects}
	for _, s := range earlier {
		if s.PlanHash != out.hash && servesSet(pair, current.Layout, s) {
			in = append(in, s.Objects)
		}
	}
	if len(in) == 1 { // the usual case: the encoded set as the plan cache holds it
		r.plans.published.put(key, pair.UID, []planstore.SplitSet{{PlanHash: out.hash, Layout: current.Layout, Objects: out.objects}})
		return planstore.SetsPublication{Objects: out.objects, Published: []string{out.hash}}, nil
	}
	pub, err := planstore.EncodeSets(pair.Name, in)
	if err != nil {
		return pub, err
	}
	kept := []planstore.SplitSet{{PlanHash: out.hash, Layout: current.Layout, Objects: out.objects}}
	for _, s := range earlier {
		if s.PlanHash != out.hash && slices.Contains(pub.Published, s.PlanHash) {
			kept = append(kept, s)
		}
	}
	r.plans.published.put(key, pair.UID, kept)
	return pub, nil
}

// servesSet says whether an earlier set is still served: it is the set of
// a generation status.generations keeps (its planHash), or its layouts are
// a cross pair ServedLayoutPairs lists (old prefill × new decode, new
// prefill × old decode) that is no generation's own. A generation's own
// pair goes by its hash alone: an edit that keeps both layouts (other
// buffers) continues the generation with a new hash, and the set it
// replaced must go. The status read here is the one before this
// reconcile, so on the edit that starts a rollout the generation being
// replaced is still listed (as current) and its set stays. A pair whose
// status lists no generations yet (written by an operator older than
// status.generations) keeps an earlier set while it shares one role's
// layout with the current one. planstore.MaxPlanSets and the shard budget
// bound what is kept (EncodeSets leaves the oldest out first).
func servesSet(pair *pdv1.PDPair, current transferplan.LayoutRecord, s planstore.SplitSet) bool {
	gens := pair.Status.Generations
	if len(gens) == 0 {
		return s.Layout.Prefill == current.Prefill || s.Layout.Decode == current.Decode
	}
	own := func(lp LayoutPair) bool {
		return slices.ContainsFunc(gens, func(g pdv1.PlanGeneration) bool { return (LayoutPair{g.Prefill, g.Decode}).equal(lp) })
	}
	for _, g := range gens {
		if g.PlanHash != "" && g.PlanHash == s.PlanHash {
			return true
		}
	}
	for _, lp := range ServedLayoutPairs(pair) {
		if !own(lp) && parallelismOf(lp.Prefill) == s.Layout.Prefill && parallelismOf(lp.Decode) == s.Layout.Decode {
			return true
		}
	}
	return false
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

// describeSets is the part of PlansPublished's message about earlier sets.
func describeSets(pub planstore.SetsPublication) string {
	s := ""
	if n := len(pub.Published) - 1; n > 0 {
		s = fmt.Sprintf("; %d earlier plan sets still published for the layouts of a rollout (%s)", n, shortHashes(pub.Published[1:]))
	}
	if len(pub.Dropped) > 0 {
		s += fmt.Sprintf("; %d earlier sets left out, past %d sets or the shard budget (%s)", len(pub.Dropped), planstore.MaxPlanSets, shortHashes(pub.Dropped))
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

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

package plansource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// During a rollout the index ConfigMap also carries plansets.json, every
// plan set still served (current first). The status names only index.json
// (status.plan.indexSHA256), so the sets index is trusted as far as
// something binds it: in signed mode plansets.sig (the operator's key);
// otherwise only its first set must be the current one the status names.
// Whatever fails here, the current set alone is still loaded through
// index.json as before: an agent never loses the plans the status names
// because an older set is missing or forged.

// errNoSets: the publication has one set (or its operator is older).
var errNoSets = errors.New("no " + planstore.SetsKey + " in the index ConfigMap")

// loadSets loads the engine ranks' plans of every set of the publication
// for the pod's decode layout (planstore.LoadEngineRankSets, as Dir does).
func (a *API) loadSets(ctx context.Context, index *corev1.ConfigMap, seal planstore.Seal) (planstore.EngineRankSets, error) {
	raw, ok := index.Data[planstore.SetsKey]
	if !ok {
		return planstore.EngineRankSets{}, errNoSets
	}
	if len(raw) > planstore.MaxIndexBytes {
		return planstore.EngineRankSets{}, refused(planstore.ReasonMalformedIndex, "%s is %d bytes, longer than %d", planstore.SetsKey, len(raw), planstore.MaxIndexBytes)
	}
	st, err := a.checkSetsSignature(index, raw, seal)
	if err != nil {
		return planstore.EngineRankSets{}, err
	}
	objects, err := a.readSetsShards(ctx, index, raw)
	if err != nil {
		return planstore.EngineRankSets{}, err
	}
	got, err := planstore.LoadEngineRankSets(objects, a.EngineRanks, decodeOptions(a.DecodeLayout)...)
	if err != nil {
		return planstore.EngineRankSets{}, err
	}
	if got.PDPair != a.PDPair || got.Current != seal.PlanHash {
		return planstore.EngineRankSets{}, refused(planstore.ReasonSealMismatch,
			"%s is the sets index of %q with current plan hash %s, but PDPair %s/%s's status names plan hash %s",
			planstore.SetsKey, got.PDPair, got.Current, a.Namespace, a.PDPair, seal.PlanHash)
	}
	if st != nil {
		a.Signed.loaded(*st)
	}
	return got, nil
}

// checkSetsSignature, in signed mode, verifies plansets.sig: signed by the
// operator for this pair, the UID and current plan hash the status states,
// and stating plansets.json's SHA-256.
func (a *API) checkSetsSignature(index *corev1.ConfigMap, raw string, seal planstore.Seal) (*planstore.Statement, error) {
	if a.Signed == nil {
		return nil, nil
	}
	sig, ok := index.Data[planstore.SetsSignatureKey]
	if !ok {
		return nil, refused(planstore.ReasonMissingSignature, "no %s beside %s: the operator has not signed the plan sets", planstore.SetsSignatureKey, planstore.SetsKey)
	}
	st, err := a.Signed.sealOf("", func(_ string, keys planstore.PublicKeys, namespace, pdpair string) (planstore.Statement, error) {
		st, err := keys.DecodeSetsSignature([]byte(sig))
		if err == nil && (st.Namespace != namespace || st.PDPair != pdpair) {
			err = refused(planstore.ReasonBadSignature, "%s is signed for PDPair %s/%s, not for %s/%s, the pair this agent serves",
				planstore.SetsSignatureKey, st.Namespace, st.PDPair, namespace, pdpair)
		}
		return st, err
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(raw))
	switch {
	case st.UID != seal.UID || st.PlanHash != seal.PlanHash:
		return nil, refused(planstore.ReasonSealMismatch, "%s is signed for uid %s with current plan hash %s, but the status states uid %s and plan hash %s",
			planstore.SetsSignatureKey, st.UID, st.PlanHash, seal.UID, seal.PlanHash)
	case st.IndexSHA256 != hex.EncodeToString(sum[:]):
		return nil, refused(planstore.ReasonSealMismatch, "%s hashes to %x, not to %s, which %s states: not the sets index the operator signed",
			planstore.SetsKey, sum, st.IndexSHA256, planstore.SetsSignatureKey)
	}
	return &st, nil
}

// readSetsShards reads the index and the shards that hold one of the
// engine ranks' plans in any set. The sets index is only looked into for
// shard names here; the loader decodes it strictly. Only the pair's own
// shard ConfigMaps are read, at most planstore.MaxShardConfigMaps of them.
func (a *API) readSetsShards(ctx context.Context, index *corev1.ConfigMap, raw string) ([]planstore.Object, error) {
	var si planstore.SetsIndex
	if err := json.Unmarshal([]byte(raw), &si); err != nil {
		return nil, refused(planstore.ReasonMalformedIndex, "%s: %v", planstore.SetsKey, err)
	}
	if len(si.Sets) > planstore.MaxPlanSets {
		return nil, refused(planstore.ReasonMalformedIndex, "%s lists %d plan sets; at most %d are published", planstore.SetsKey, len(si.Sets), planstore.MaxPlanSets)
	}
	shards := map[string]bool{}
	for s := range si.Sets {
		for _, sh := range si.Sets[s].Shards {
			if a.holdsRanks(&si.Sets[s], sh) {
				shards[sh.ConfigMap] = true
			}
		}
	}
	objects := []planstore.Object{object(index)}
	for n := range planstore.MaxShardConfigMaps {
		name := planstore.ShardConfigMapName(a.PDPair, n)
		if !shards[name] {
			continue
		}
		cm, err := a.get(ctx, name)
		if err != nil {
			return nil, err
		}
		objects = append(objects, object(cm))
	}
	return objects, nil
}

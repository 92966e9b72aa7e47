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
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// conflictRetry is how soon a PDPair blocked by someone else's ConfigMap is
// looked at again: that ConfigMap is not cached, so its deletion sends no event.
const conflictRetry = 30 * time.Second

// racedWriteRetry is how soon a pair is looked at again when someone else
// wrote one of its plan ConfigMaps while the manager did (the event of
// that write was held back with the manager's own; configmapsverified.go).
const racedWriteRetry = time.Second

// publication is what publishing (or withdrawing) did.
type publication struct {
	published bool
	// reason and message explain PlansPublished.
	reason  pdv1.PDPairConditionReason
	message string
	// configMaps are the published objects, index first; bytes their data size.
	configMaps []string
	bytes      int64
	// wrote is true when a ConfigMap was created or updated.
	wrote bool
	// indexSHA256 is what the signature names (status.plan.indexSHA256).
	indexSHA256 string
	// kept is the summary of plans left in place while a contract pair's
	// live contracts are read again (published for this generation before
	// the manager restarted): neither confirmed nor withdrawn.
	kept *pdv1.PlanSummary
	// retry is a transient API failure; the reconcile returns it for backoff.
	retry        error
	requeueAfter time.Duration
	// crosses are the cross pairs of a rollout as planned for this
	// publication (crossplans.go), for RolloutCompatible.
	crosses []crossPlan
}

// errConflict says a ConfigMap the plans need belongs to someone else.
type errConflict struct{ name, owner string }

func (e *errConflict) Error() string {
	return fmt.Sprintf("ConfigMap %s already exists and is not controlled by this PDPair (%s); delete or rename it", e.name, e.owner)
}

// publish makes the PDPair's ConfigMaps what the plan outcome says: the
// encoded plans when the layout is compatible, nothing otherwise.
func (r *PDPairReconciler) publish(ctx context.Context, pair *pdv1.PDPair, out *planOutcome, model modelConfig) publication {
	owned, err := r.ownedConfigMaps(ctx, pair)
	if err != nil {
		return publishFailed(err)
	}
	switch {
	case out.pending && pair.Status.Plan != nil && pair.Status.ObservedGeneration == pair.Generation:
		return publication{reason: pdv1.ReasonContractPending, kept: pair.Status.Plan,
			message: fmt.Sprintf("the plans published for generation %d (hash %s) stay in place while the live contracts are read again", pair.Generation, short(pair.Status.Plan.Hash))}
	case out.pending:
		return r.withdraw(ctx, pair, owned, pdv1.ReasonContractPending, "no plans are published before the live contracts are read")
	case !out.compatible:
		return r.withdraw(ctx, pair, owned, pdv1.ReasonLayoutIncompatible,
			fmt.Sprintf("no plans are published while the layout is incompatible (%s)", out.layoutReason))
	case out.overBudget != nil:
		return r.withdraw(ctx, pair, owned, pdv1.ReasonPlanTooLarge, planbudget.Explain(out.overBudget, "the manager's"))
	case out.noPlans:
		return r.withdraw(ctx, pair, owned, pdv1.ReasonEngineLoadsNoPlans,
			fmt.Sprintf("engine %s moves the KV cache itself: it loads no plans, so none are published", pair.Spec.EngineOrDefault()))
	case out.encodeErr != nil:
		return r.withdraw(ctx, pair, owned, publishReason(out.encodeErr.Reason), out.encodeErr.Message)
	}
	full, err := r.controlledData(ctx, pair, owned)
	if err != nil {
		return publishFailed(err)
	}
	sets, err := r.publishedSets(ctx, pair, out, full, model)
	if err != nil {
		return publishFailed(err)
	}
	desired, err := r.desiredConfigMaps(pair, out, sets.Objects)
	if err != nil {
		return publishFailed(err)
	}
	pub := publication{published: true, reason: pdv1.ReasonPublished, crosses: sets.crosses}
	var raced bool
	if pub.wrote, raced, err = r.applyConfigMaps(ctx, pair, desired, owned); err != nil {
		return publishFailed(err)
	}
	if raced {
		pub.requeueAfter = racedWriteRetry
	}
	if _, err := r.deleteConfigMaps(ctx, pair, owned, names(desired)); err != nil {
		return publishFailed(err)
	}
	seal, err := planstore.NewSeal(pair.Name, string(pair.UID), pair.Generation, out.objects[0])
	if err != nil {
		return publishFailed(err)
	}
	pub.indexSHA256 = seal.IndexSHA256
	for _, cm := range desired {
		pub.configMaps = append(pub.configMaps, cm.Name)
		pub.bytes += dataBytes(cm)
	}
	pub.message = fmt.Sprintf("%d decode TP rank plans in %d ConfigMaps (%s and %d shards, %d bytes), plan hash %s%s",
		out.decodeRanks, len(desired), desired[0].Name, len(desired)-1, pub.bytes, out.hash, describeSets(sets))
	return pub
}

// withdraw deletes every published ConfigMap, and signs nothing: plans for
// a spec that is no longer valid must not stay where agents would load
// them, and nothing found under their names is to be trusted.
func (r *PDPairReconciler) withdraw(ctx context.Context, pair *pdv1.PDPair, owned map[string]*metav1.PartialObjectMetadata, reason pdv1.PDPairConditionReason, why string) publication {
	n, err := r.deleteConfigMaps(ctx, pair, owned, nil)
	if err != nil {
		return publishFailed(err)
	}
	msg := why
	if n > 0 {
		msg = fmt.Sprintf("%s; withdrew %d previously published ConfigMaps", why, n)
	}
	return publication{reason: reason, message: msg}
}

func publishFailed(err error) publication {
	var conflict *errConflict
	if errors.As(err, &conflict) {
		return publication{reason: pdv1.ReasonConfigMapConflict, message: conflict.Error(), requeueAfter: conflictRetry}
	}
	return publication{reason: pdv1.ReasonPublishFailed, message: "writing the plan ConfigMaps failed: " + err.Error(), retry: err}
}

// ownedConfigMaps lists, from the cache, the plan ConfigMaps this PDPair
// may claim, by name: metadata only (cache.go).
func (r *PDPairReconciler) ownedConfigMaps(ctx context.Context, pair *pdv1.PDPair) (map[string]*metav1.PartialObjectMetadata, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1ConfigMapListGVK)
	if err := r.List(ctx, list, client.InNamespace(pair.Namespace), client.MatchingLabels{pdv1.LabelPDPair: pair.Name}); err != nil {
		return nil, err
	}
	owned := map[string]*metav1.PartialObjectMetadata{}
	for i := range list.Items {
		if claimable(&list.Items[i], pair) {
			owned[list.Items[i].Name] = &list.Items[i]
		}
	}
	return owned, nil
}

// controlledData reads, by name from the API server, the data of the plan
// ConfigMaps the pair controls (its UID in their controller reference),
// for the sets published before the manager started (readBackSets); nil
// when the sets published are remembered, as after the first publication.
// Orphans that carry the pair's labels are adopted but never read back: a
// namespace user can write those.
func (r *PDPairReconciler) controlledData(ctx context.Context, pair *pdv1.PDPair, owned map[string]*metav1.PartialObjectMetadata) (map[string]*corev1.ConfigMap, error) {
	if _, ok := r.plans.published.get(client.ObjectKeyFromObject(pair), pair.UID); ok {
		return nil, nil
	}
	full := map[string]*corev1.ConfigMap{}
	for name, m := range owned {
		if !metav1.IsControlledBy(m, pair) {
			continue
		}
		var cm corev1.ConfigMap
		err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: pair.Namespace, Name: name}, &cm)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if metav1.IsControlledBy(&cm, pair) {
			full[name] = &cm
		}
	}
	return full, nil
}

// claimable reports whether the PDPair may manage (update, adopt, delete) a
// ConfigMap. It must be under one of the pair's plan names (the index or a
// shard 0..MaxShardConfigMaps-1), and either be controlled by the pair or,
// with no controller at all, carry both the pair's label and the role label
// the operator writes for that name: an orphan of ours whose owner
// reference was removed, which is adopted. A user's ConfigMap that merely
// carries the pair label (kustomize commonLabels put it on every object of
// an app) has another name or no plan role, and is never touched.
func claimable(cm metav1.Object, pair *pdv1.PDPair) bool {
	role, ok := planRole(pair.Name, cm.GetName())
	if !ok {
		return false
	}
	if metav1.IsControlledBy(cm, pair) {
		return true
	}
	labels := cm.GetLabels()
	return metav1.GetControllerOf(cm) == nil && labels[pdv1.LabelPDPair] == pair.Name && labels[pdv1.LabelRole] == role
}

// planRole is the role label the operator writes on the ConfigMap of a
// pair under name, and whether name is one of the pair's plan names at all.
func planRole(pair, name string) (string, bool) {
	if name == planstore.IndexConfigMapName(pair) {
		return pdv1.RolePlanIndex, true
	}
	n, ok := planstore.ShardNumber(pair, name)
	if !ok || n >= planstore.MaxShardConfigMaps {
		return "", false
	}
	return pdv1.RolePlanShard, true
}

// applyConfigMaps creates or updates the desired ConfigMaps, shards before
// the index, so that an agent reading through the API never finds an index
// naming keys that do not exist yet.
func (r *PDPairReconciler) applyConfigMaps(ctx context.Context, pair *pdv1.PDPair, desired []*corev1.ConfigMap, owned map[string]*metav1.PartialObjectMetadata) (wrote, raced bool, err error) {
	order := append(append([]*corev1.ConfigMap{}, desired[1:]...), desired[0])
	for _, want := range order {
		changed, r1, err := r.applyConfigMap(ctx, pair, want, owned[want.Name])
		raced = raced || r1
		if err != nil {
			return wrote, raced, err
		}
		wrote = wrote || changed
	}
	return wrote, raced, nil
}

// applyConfigMap makes one ConfigMap match want with a server-side apply
// owned by the manager (field owner pdtopo): the labels, annotations, owner
// reference and data it sets are its own, and what others add to labels and
// annotations is left alone. have is the cached metadata, or nil when the
// cache has none (never created, deleted, or its label removed). The cache
// holds no data: a ConfigMap is left alone without a read when its metadata
// matches and its resourceVersion is one at which the manager knew its
// data (configmapsverified.go); otherwise it is read by name.
func (r *PDPairReconciler) applyConfigMap(ctx context.Context, pair *pdv1.PDPair, want *corev1.ConfigMap, have *metav1.PartialObjectMetadata) (wrote, raced bool, err error) {
	key := client.ObjectKeyFromObject(pair)
	wantHash := want.Annotations[pdv1.AnnotationContentHash]
	if have != nil && metaUpToDate(have, want) && r.verified.holds(key, want.Name, have.UID, have.ResourceVersion, wantHash) {
		return false, false, nil
	}
	// Absent, someone else's (never applied over), or ours in a state the
	// manager has not seen: read it.
	live, err := r.liveConfigMap(ctx, pair, want.Name)
	if client.IgnoreNotFound(err) != nil {
		return false, false, err
	}
	if err == nil && upToDate(live, want) {
		r.verified.set(key, want.Name, verifiedAt{uid: live.UID, rv: live.ResourceVersion, contentHash: wantHash})
		return false, false, nil
	}
	// The watch event of this write may come before its answer
	// (configmapsverified.go): someone else's write in between is raced.
	r.verified.beginWrite(key, want.Name)
	var done verifiedAt
	defer func() { raced = r.verified.endWrite(key, want.Name, done) }()
	if err == nil {
		// Data keys someone else added are theirs under server-side apply;
		// plan directories must hold the plans and nothing else.
		if err := r.removeForeignKeys(ctx, live, want); err != nil {
			return false, false, err
		}
	}
	ac := configMapApply(want)
	if err := r.Apply(ctx, ac, client.FieldOwner(pdv1.ManagerName), client.ForceOwnership); err != nil {
		return false, false, err
	}
	if m := ac.ObjectMetaApplyConfiguration; m != nil && m.UID != nil && m.ResourceVersion != nil {
		done = verifiedAt{uid: *m.UID, rv: *m.ResourceVersion, contentHash: wantHash}
	}
	return true, false, nil
}

// removeForeignKeys deletes the data and binary data keys of have that want
// does not hold, with a merge patch (null removes a key).
func (r *PDPairReconciler) removeForeignKeys(ctx context.Context, have, want *corev1.ConfigMap) error {
	patch := map[string]map[string]any{}
	for k := range have.Data {
		if _, ok := want.Data[k]; !ok {
			if patch["data"] == nil {
				patch["data"] = map[string]any{}
			}
			patch["data"][k] = nil
		}
	}
	for k := range have.BinaryData {
		if _, ok := want.BinaryData[k]; !ok {
			if patch["binaryData"] == nil {
				patch["binaryData"] = map[string]any{}
			}
			patch["binaryData"][k] = nil
		}
	}
	if len(patch) == 0 {
		return nil
	}
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	return r.Patch(ctx, have, client.RawPatch(types.MergePatchType, raw), client.FieldOwner(pdv1.ManagerName))
}

// liveConfigMap reads a ConfigMap from the API server, bypassing the cache,
// and refuses it if this PDPair may not claim it.
func (r *PDPairReconciler) liveConfigMap(ctx context.Context, pair *pdv1.PDPair, name string) (*corev1.ConfigMap, error) {
	var live corev1.ConfigMap
	if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: pair.Namespace, Name: name}, &live); err != nil {
		return nil, err
	}
	if !claimable(&live, pair) {
		owner := "no controller"
		if ref := metav1.GetControllerOf(&live); ref != nil {
			owner = "controlled by " + ref.Kind + " " + ref.Name
		}
		return nil, &errConflict{name: name, owner: owner}
	}
	return &live, nil
}

// deleteConfigMaps deletes the owned ConfigMaps whose names are not kept,
// each only if it is still the object listed (its UID).
func (r *PDPairReconciler) deleteConfigMaps(ctx context.Context, pair *pdv1.PDPair, owned map[string]*metav1.PartialObjectMetadata, keep map[string]bool) (int, error) {
	n := 0
	for name, m := range owned {
		if keep[name] {
			continue
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: name}}
		err := r.Delete(ctx, cm, client.Preconditions{UID: &m.UID})
		if client.IgnoreNotFound(err) != nil {
			return n, err
		}
		r.verified.drop(client.ObjectKeyFromObject(pair), name)
		n++
	}
	return n, nil
}

func names(cms []*corev1.ConfigMap) map[string]bool {
	out := make(map[string]bool, len(cms))
	for _, cm := range cms {
		out[cm.Name] = true
	}
	return out
}

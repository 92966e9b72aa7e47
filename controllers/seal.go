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
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// The seal: after every publication (and withdrawal) the operator states,
// in a Secret of the pair's that only it writes, the SHA-256 of the index
// it published for the pair's UID and generation (planstore.Seal). Decode
// pods mount it as a volume of its own and their agents load no index it
// does not name, so a ConfigMap written by someone else under a plan name
// is never loaded (docs/decode-pods.md).
//
// The manager writes the Secret with server-side apply and never reads a
// Secret outside its own namespace: create and patch are all it needs.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=create;patch

// sealWrites remembers the seal last written per pair, so that reconciles
// that change nothing write nothing. A manager that starts afresh writes
// each pair's seal once (an identical apply changes nothing on the server).
type sealWrites struct {
	mu   sync.Mutex
	last map[types.NamespacedName]string
}

func newSealWrites() *sealWrites { return &sealWrites{last: map[types.NamespacedName]string{}} }

func (w *sealWrites) seen(key types.NamespacedName, raw string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last[key] == raw
}

func (w *sealWrites) remember(key types.NamespacedName, raw string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last[key] = raw
}

func (w *sealWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.last, key)
}

// writeSeal applies the pair's seal Secret. It runs after the ConfigMaps it
// names are written (and the withdrawn ones deleted), so a reader that
// finds a seal finds what it names, or an older index it refuses and
// retries on.
func (r *PDPairReconciler) writeSeal(ctx context.Context, pair *pdv1.PDPair, seal planstore.Seal) error {
	raw, err := seal.Encode()
	if err != nil {
		return fmt.Errorf("sealing the plans of %s: %w", pair.Name, err)
	}
	key := client.ObjectKeyFromObject(pair)
	if r.seals.seen(key, string(raw)) {
		return nil
	}
	ref := metav1ac.OwnerReference().WithAPIVersion(pdv1.GroupVersion.String()).WithKind("PDPair").
		WithName(pair.Name).WithUID(pair.UID).WithController(true).WithBlockOwnerDeletion(true)
	ac := corev1ac.Secret(planstore.SealSecretName(pair.Name), pair.Namespace).
		WithLabels(map[string]string{pdv1.LabelPDPair: pair.Name, pdv1.LabelRole: pdv1.RolePlanSeal, pdv1.LabelManagedBy: pdv1.ManagerName}).
		WithAnnotations(map[string]string{pdv1.AnnotationPlanHash: seal.PlanHash}).
		WithOwnerReferences(ref).
		WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{planstore.SealKey: raw})
	if err := r.Apply(ctx, ac, client.FieldOwner(pdv1.ManagerName), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing the seal Secret %s: %w", planstore.SealSecretName(pair.Name), err)
	}
	r.seals.remember(key, string(raw))
	return nil
}

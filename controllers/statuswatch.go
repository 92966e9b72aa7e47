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
	"encoding/json"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// The PDPair watch passes spec changes (a new generation) and nothing else
// of the manager's own status writes, which would otherwise reconcile every
// pair once more after each write. But a status that someone else wiped or
// edited (a restore from backup, a `kubectl patch --subresource=status`, a
// GitOps tool pruning it) must be rewritten promptly, not at the next spec
// change. So the reconciler remembers a digest of the status it last wrote
// or found current, and the watch passes any update whose status differs.

// statusDigest is the SHA-256 of a status's JSON: the form the API server
// stores and returns, so the manager's own write, read back, has the same
// digest (condition times are whole seconds in JSON).
type statusDigest [sha256.Size]byte

func digestOf(s *pdv1.PDPairStatus) statusDigest {
	b, err := json.Marshal(s)
	if err != nil { // plain values: cannot happen
		return statusDigest{}
	}
	return sha256.Sum256(b)
}

// writtenStatuses remembers, per PDPair, the digest of the status the
// manager last wrote or found current.
type writtenStatuses struct {
	mu      sync.Mutex
	digests map[types.NamespacedName]statusDigest
}

func newWrittenStatuses() *writtenStatuses {
	return &writtenStatuses{digests: map[types.NamespacedName]statusDigest{}}
}

func (w *writtenStatuses) remember(key types.NamespacedName, s *pdv1.PDPairStatus) {
	d := digestOf(s)
	w.mu.Lock()
	w.digests[key] = d
	w.mu.Unlock()
}

func (w *writtenStatuses) forget(key types.NamespacedName) {
	w.mu.Lock()
	delete(w.digests, key)
	w.mu.Unlock()
}

// isOurs reports whether s is the status last remembered for key.
func (w *writtenStatuses) isOurs(key types.NamespacedName, s *pdv1.PDPairStatus) bool {
	d := digestOf(s)
	w.mu.Lock()
	defer w.mu.Unlock()
	have, ok := w.digests[key]
	return ok && have == d
}

// specOrForeignStatusChange passes creations, deletions, new generations and
// updates whose status is not the one the manager last wrote.
type specOrForeignStatusChange struct {
	predicate.Funcs
	written *writtenStatuses
}

func (p specOrForeignStatusChange) Update(e event.UpdateEvent) bool {
	if (predicate.GenerationChangedPredicate{}).Update(e) {
		return true
	}
	pair, ok := e.ObjectNew.(*pdv1.PDPair)
	if !ok {
		return true
	}
	return !p.written.isOurs(types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}, &pair.Status)
}

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
	"maps"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// The signature: the index ConfigMap carries, beside index.json, the
// operator's ed25519 signature of the pair's namespace, name, UID and
// generation and the index's SHA-256 (planstore.SignatureKey). The key is
// the manager's, kept in a Secret of its own namespace (cmd/manager); the
// webhook gives decode agents the public key, and they load no index it did
// not sign for their pair, nor one of an older generation. So the manager
// writes no Secret in a tenant's namespace, and a tenant who rewrites the
// index ConfigMap (plans and signature) steers nothing; the next reconcile
// puts the published bytes back, since applyConfigMap compares the cached
// object with what it publishes (docs/plan-format.md, "Signed index").

// signedIndex is the index object signed for the pair, or obj itself when
// the reconciler has no signer (plans then load only unsigned, as through
// the --pdpair API source, which checks the status instead). obj is shared
// with the plan cache, so the signature goes into a copy.
func (r *PDPairReconciler) signedIndex(pair *pdv1.PDPair, obj planstore.Object) (planstore.Object, error) {
	if r.Signer == nil {
		return obj, nil
	}
	obj.Data = maps.Clone(obj.Data)
	err := r.Signer.Sign(pair.Namespace, pair.Name, string(pair.UID), pair.Generation, &obj)
	return obj, err
}

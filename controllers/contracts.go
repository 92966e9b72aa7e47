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
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/pairlayout"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// DefaultContractRefreshInterval is how soon a pair whose contracts are in
// ConfigMaps reads them again. The manager's cache holds only plan
// ConfigMaps, so contract ConfigMaps are read through the API server on
// every reconcile and followed by this period; a change re-plans the pair.
const DefaultContractRefreshInterval = 30 * time.Second

// contractInputs is what a contract pair's verdict is made from.
type contractInputs struct {
	pair  transferplan.ContractPair
	roles [2]pairlayout.ContractRole
	// refusal is set when the spec or a contract cannot be used (a
	// *transferplan.LayoutError); the pair is then incompatible.
	refusal error
	// fingerprint identifies the contracts' bytes (and a refusal): with the
	// generation, the key under which an outcome is reused.
	fingerprint string
	// fromConfigMap: a contract is read from a ConfigMap, to be read again.
	fromConfigMap bool
}

// readContracts reads a contract pair's contracts, inline or from their
// ConfigMaps in the pair's namespace. Only failures to talk to the API
// server are errors; a missing ConfigMap or key, or a contract the engine
// would refuse, is the pair's verdict.
// It returns nil for a pair on the V1 wire.
func (r *PDPairReconciler) readContracts(ctx context.Context, pair *pdv1.PDPair) (*contractInputs, error) {
	if !pairlayout.IsContractPair(pair.Spec) {
		return nil, nil
	}
	in := &contractInputs{}
	read := func(role string, src pdv1.CacheContractSource) ([]byte, string, error) {
		if src.ConfigMapKeyRef == nil {
			return []byte(src.Inline), "spec.cacheContracts." + role + ".inline", nil
		}
		in.fromConfigMap = true
		return r.readContractConfigMap(ctx, pair.Namespace, role, *src.ConfigMapKeyRef)
	}
	var err error
	in.pair, in.roles, err = pairlayout.ContractPairFromSpec(pair.Spec, read)
	var le *transferplan.LayoutError
	switch {
	case errors.As(err, &le):
		in.refusal = err
	case err != nil:
		return nil, err
	}
	h := sha256.New()
	for _, role := range in.roles {
		fmt.Fprintf(h, "%d:", len(role.Raw))
		h.Write(role.Raw)
	}
	if in.refusal != nil {
		h.Write([]byte(in.refusal.Error()))
	}
	in.fingerprint = hex.EncodeToString(h.Sum(nil))
	return in, nil
}

func (r *PDPairReconciler) readContractConfigMap(ctx context.Context, namespace, role string, ref pdv1.ConfigMapKeyReference) ([]byte, string, error) {
	field := "cacheContracts." + role + ".configMapKeyRef"
	var cm corev1.ConfigMap
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &cm)
	if apierrors.IsNotFound(err) {
		return nil, "", unavailable(field, fmt.Sprintf("create ConfigMap %s with key %s holding the %s's contract", ref.Name, ref.Key, role),
			"ConfigMap %q does not exist in namespace %q", ref.Name, namespace)
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, ref.Name, err)
	}
	source := fmt.Sprintf("ConfigMap %s key %s (resourceVersion %s)", ref.Name, ref.Key, cm.ResourceVersion)
	if v, ok := cm.Data[ref.Key]; ok {
		return []byte(v), source, nil
	}
	if v, ok := cm.BinaryData[ref.Key]; ok {
		return v, source, nil
	}
	keys := make([]string, 0, len(cm.Data)+len(cm.BinaryData))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	for k := range cm.BinaryData {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return nil, "", unavailable(field, fmt.Sprintf("put the %s's contract under key %s, or name one of the keys it has", role, ref.Key),
		"ConfigMap %q has no key %q (its keys: %v)", ref.Name, ref.Key, keys)
}

func unavailable(field, fix, format string, args ...any) error {
	return (&transferplan.LayoutError{
		Reason: pairlayout.ReasonContractUnavailable, Field: field,
		Message: field + ": " + fmt.Sprintf(format, args...),
	}).WithFix(fix)
}

// status says where the contracts came from, as read at t.
func (in *contractInputs) status(t metav1.Time) *pdv1.ContractsStatus {
	s := &pdv1.ContractsStatus{}
	for i, dst := range []*pdv1.ContractSourceStatus{&s.Prefill, &s.Decode} {
		role := in.roles[i]
		*dst = pdv1.ContractSourceStatus{Source: role.Source, Bytes: int64(len(role.Raw)), ReadTime: t}
		if role.Contract != nil {
			dst.SHA256 = role.Contract.SHA256()
		}
		if role.Source == "" {
			dst.Source = truncate("not read: "+in.refusal.Error(), 300)
		}
	}
	return s
}

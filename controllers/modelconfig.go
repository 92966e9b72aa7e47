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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// modelConfig is what the fetch step read of a model-aware pair's
// config.json when spec.model names a ConfigMap: its bytes and the
// ConfigMap's resourceVersion (a change re-plans the pair), or why it could
// not be read.
type modelConfig struct {
	data    []byte
	version string
	// unavailable says why the config could not be read ("" when read);
	// fix says what to do about it.
	unavailable, fix string
}

// DefaultModelRecheckInterval is how often a pair whose config is in a
// ConfigMap is looked at again: the manager does not watch users'
// ConfigMaps (its cache holds only plan ConfigMaps), so it reads the
// ConfigMap again and re-plans when its resourceVersion changed.
const DefaultModelRecheckInterval = 30 * time.Second

// fetchModelConfig reads the ConfigMap key spec.model.configMapKeyRef
// names, around the cache, for a model-aware pair; other pairs need
// nothing. A missing ConfigMap or key, or a value over the size limit, is
// not an error: the pair's status says so and the pair is looked at again.
func (r *PDPairReconciler) fetchModelConfig(ctx context.Context, pair *pdv1.PDPair) (modelConfig, error) {
	if pair.Spec.Model == nil || pair.Spec.Model.ConfigMapKeyRef == nil {
		return modelConfig{}, nil
	}
	ref := pair.Spec.Model.ConfigMapKeyRef
	var cm corev1.ConfigMap
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: pair.Namespace, Name: ref.Name}, &cm)
	switch {
	case apierrors.IsNotFound(err):
		return modelConfig{unavailable: fmt.Sprintf("ConfigMap %s/%s does not exist", pair.Namespace, ref.Name),
			fix: fmt.Sprintf("create ConfigMap %s in namespace %s with the model's config.json under key %q (kubectl create configmap %s --from-file=%s=config.json)",
				ref.Name, pair.Namespace, ref.Key, ref.Name, ref.Key)}, nil
	case apierrors.IsForbidden(err):
		return modelConfig{unavailable: fmt.Sprintf("the operator may not read ConfigMap %s/%s: %v", pair.Namespace, ref.Name, err),
			fix: "grant the operator get on configmaps in the namespace (the chart's and kustomize's RBAC do)"}, nil
	case err != nil:
		return modelConfig{}, err
	}
	data, ok := []byte(cm.Data[ref.Key]), false
	if _, ok = cm.Data[ref.Key]; !ok {
		data, ok = cm.BinaryData[ref.Key]
	}
	if !ok {
		return modelConfig{version: cm.ResourceVersion,
			unavailable: fmt.Sprintf("ConfigMap %s/%s has no key %q", pair.Namespace, ref.Name, ref.Key),
			fix:         fmt.Sprintf("put the model's config.json under key %q, or name the key it is under", ref.Key)}, nil
	}
	if len(data) > modelgeom.MaxConfigBytes {
		// Refused here by its size, before it is parsed; the derivation
		// would say the same.
		data = data[:modelgeom.MaxConfigBytes+1]
	}
	return modelConfig{data: data, version: cm.ResourceVersion}, nil
}

// modelRecheck is when to read a pair's model ConfigMap again (0: never).
func (r *PDPairReconciler) modelRecheck(pair *pdv1.PDPair) time.Duration {
	if pair.Spec.Model == nil || pair.Spec.Model.ConfigMapKeyRef == nil {
		return 0
	}
	if r.ModelRecheckInterval > 0 {
		return r.ModelRecheckInterval
	}
	return DefaultModelRecheckInterval
}

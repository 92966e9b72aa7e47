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
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// Through the API the agent trusts the index the PDPair's status names
// (status.plan.indexSHA256), which only the operator writes: the same
// word decode pods read from the seal Secret (planstore.Seal). Anyone who
// can write ConfigMaps can replace the index ConfigMap; nobody but the
// operator can make the status name it.

var pdpairsResource = pdv1.GroupVersion.WithResource("pdpairs")

// errNoPDPairClient: an API source built without a client for PDPairs.
var errNoPDPairClient = errors.New("no client for PDPairs to read the published index's hash from")

// statusSeal reads the PDPair (from the informer's cache once Notify has
// run) and returns the seal its status states.
func (a *API) statusSeal(ctx context.Context) (planstore.Seal, error) {
	var (
		obj runtime.Object
		err error
	)
	switch l := a.pairLister.Load(); {
	case l != nil:
		obj, err = (*l).Get(a.PDPair)
	case a.Dynamic != nil:
		obj, err = a.Dynamic.Resource(pdpairsResource).Namespace(a.Namespace).Get(ctx, a.PDPair, metav1.GetOptions{})
	default:
		return planstore.Seal{}, errNoPDPairClient
	}
	if err != nil {
		return planstore.Seal{}, fmt.Errorf("reading PDPair %s/%s: %w", a.Namespace, a.PDPair, err)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return planstore.Seal{}, fmt.Errorf("reading PDPair %s/%s: got a %T", a.Namespace, a.PDPair, obj)
	}
	pair, err := sealFields(u)
	if err != nil {
		return planstore.Seal{}, fmt.Errorf("reading PDPair %s/%s: %w", a.Namespace, a.PDPair, err)
	}
	return sealOfStatus(pair)
}

// sealFields converts what sealOfStatus reads (the name, the UID,
// status.observedGeneration and status.plan) and nothing else: the whole
// status (generations, conditions, the decode fleet) costs a thousand
// agents a conversion each on every change of the pair.
func sealFields(u *unstructured.Unstructured) (*pdv1.PDPair, error) {
	pair := &pdv1.PDPair{}
	pair.Namespace, pair.Name, pair.UID = u.GetNamespace(), u.GetName(), u.GetUID()
	gen, _, err := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if err != nil {
		return nil, err
	}
	pair.Status.ObservedGeneration = gen
	plan, found, err := unstructured.NestedMap(u.Object, "status", "plan")
	if err != nil || !found {
		return pair, err
	}
	pair.Status.Plan = &pdv1.PlanSummary{}
	return pair, runtime.DefaultUnstructuredConverter.FromUnstructured(plan, pair.Status.Plan)
}

// sealOfStatus is the seal a PDPair's status states: nothing published
// while status.plan (or its indexSHA256, which an operator older than this
// agent does not write) is absent.
func sealOfStatus(pair *pdv1.PDPair) (planstore.Seal, error) {
	generation := max(pair.Status.ObservedGeneration, 1)
	seal := planstore.WithdrawnSeal(pair.Name, string(pair.UID), generation)
	if p := pair.Status.Plan; p != nil && p.IndexSHA256 != "" {
		seal.IndexSHA256, seal.PlanHash = p.IndexSHA256, p.Hash
	}
	raw, err := seal.Encode() // checks every field as a loaded seal is checked
	if err != nil {
		return planstore.Seal{}, fmt.Errorf("PDPair %s/%s status: %w", pair.Namespace, pair.Name, err)
	}
	return planstore.DecodeSeal(raw)
}

// notifyPDPair starts an informer on the one PDPair (a field selector on
// its name) and calls changed on every change of it: a new status names a
// new index.
func (a *API) notifyPDPair(ctx context.Context, changed func()) error {
	if a.Dynamic == nil {
		return errNoPDPairClient
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(a.Dynamic, informerResync, a.Namespace,
		func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + a.PDPair })
	inf := factory.ForResource(pdpairsResource)
	if _, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(any, any) { changed() },
		DeleteFunc: func(any) { changed() },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("watching PDPair %s/%s: the %v cache did not sync", a.Namespace, a.PDPair, typ)
		}
	}
	lister := inf.Lister().ByNamespace(a.Namespace)
	a.pairLister.Store(&lister)
	return nil
}

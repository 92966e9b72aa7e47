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
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listerscorev1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// NamespaceEnv names the environment variable a PDPair given without a
// namespace is looked up in (set from the downward API in decode pods).
const NamespaceEnv = "POD_NAMESPACE"

// API reads a PDPair's plan ConfigMaps through the Kubernetes API: the
// index by its name, then the shards it names. The index records every
// rank's SHA-256, so a shard updated between the reads fails the load
// rather than pairing a plan with another layout; the next change retries.
//
// The index loaded must be the one the PDPair's status names
// (status.plan.indexSHA256; see apiseal.go), so a ConfigMap someone else
// wrote under the index's name is refused.
//
// Before Notify, every read is a GET. Notify starts an informer on the
// pair's ConfigMaps (selected by the pd.pdtopo.dev/pdpair label) and one on
// the PDPair, and reads are served from their caches from then on: the
// agent learns of a new plan when the API server tells it, not by polling.
type API struct {
	Client kubernetes.Interface
	// Dynamic reads the PDPair.
	Dynamic     dynamic.Interface
	Namespace   string
	PDPair      string
	EngineRanks []int
	// DecodeLayout, if set, is the decode layout the pod was admitted
	// under: only the plan sets made for it are loaded (every set of
	// plansets.json, as Dir loads them; see apisets.go). Unset, the sets of
	// the current set's decode layout are.
	DecodeLayout *transferplan.Parallelism
	// Signed, if set, must have signed plansets.json (plansets.sig) for
	// any set but the current one to be loaded; unset, the sets index is
	// trusted when its first set is the one the status names.
	Signed *Signed

	lister     atomic.Pointer[listerscorev1.ConfigMapNamespaceLister]
	pairLister atomic.Pointer[cache.GenericNamespaceLister]
}

// NewAPI builds an API source for the PDPair "NAMESPACE/NAME" (or "NAME",
// the namespace then read from POD_NAMESPACE). Without a kubeconfig path it
// uses the pod's in-cluster service account.
func NewAPI(kubeconfig, pdpair string, engineRanks []int) (*API, error) {
	ns, name, err := ParsePDPair(pdpair, os.Getenv(NamespaceEnv))
	if err != nil {
		return nil, err
	}
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.UserAgent = "pdtopo-receiver-agent"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return NewAPIForConfig(cfg, hc, ns, name, engineRanks)
}

// NewAPIForConfig is NewAPI's source from a REST config and the HTTP
// client its requests go through. ConfigMaps are read as protobuf, as the
// Kubernetes controllers read built-in kinds: a shard's binaryData comes
// as raw bytes, not base64 inside JSON, which cuts the bytes an edit sends
// every agent and the CPU each spends decoding them. The PDPair, a custom
// resource, has no protobuf form and is read as JSON.
func NewAPIForConfig(cfg *rest.Config, hc *http.Client, namespace, pdpair string, engineRanks []int) (*API, error) {
	pb := rest.CopyConfig(cfg)
	pb.ContentType = runtime.ContentTypeProtobuf
	pb.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cs, err := kubernetes.NewForConfigAndClient(pb, hc)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &API{Client: cs, Dynamic: dyn, Namespace: namespace, PDPair: pdpair, EngineRanks: engineRanks}, nil
}

// ParsePDPair splits "NAMESPACE/NAME", or takes "NAME" in defaultNamespace.
func ParsePDPair(pdpair, defaultNamespace string) (namespace, name string, err error) {
	ns, name, hasSlash := strings.Cut(pdpair, "/")
	if !hasSlash {
		ns, name = defaultNamespace, pdpair
		if ns == "" && name != "" {
			return "", "", fmt.Errorf("--pdpair %q has no namespace and %s is not set: give NAMESPACE/NAME", pdpair, NamespaceEnv)
		}
	}
	if ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("--pdpair %q is not NAMESPACE/NAME (or NAME with %s set)", pdpair, NamespaceEnv)
	}
	return ns, name, nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no --kubeconfig and not in a cluster: %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

func (a *API) Describe() string { return fmt.Sprintf("PDPair %s/%s plans", a.Namespace, a.PDPair) }

// Version is the hash of the index, and the one the status names: the
// index records every rank's hash, so it changes whenever any published
// plan does (and, unlike a resourceVersion, not when only metadata is
// touched).
func (a *API) Version(ctx context.Context) (string, error) {
	cm, err := a.get(ctx, planstore.IndexConfigMapName(a.PDPair))
	if err != nil {
		return "", err
	}
	seal, err := a.statusSeal(ctx)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(cm.Data[planstore.IndexKey]))
	v := hex.EncodeToString(sum[:]) + " " + seal.IndexSHA256
	if sets, ok := cm.Data[planstore.SetsKey]; ok { // an older set may change alone
		sum = sha256.Sum256([]byte(sets))
		v += " sets:" + hex.EncodeToString(sum[:])
	}
	return v, nil
}

func (a *API) Load(ctx context.Context) (Plans, error) {
	if err := checkRanks(a.EngineRanks); err != nil {
		return Plans{}, err
	}
	seal, err := a.statusSeal(ctx)
	if err != nil {
		return Plans{}, err
	}
	index, err := a.get(ctx, planstore.IndexConfigMapName(a.PDPair))
	if err != nil {
		return Plans{}, err
	}
	idx, err := planstore.LoadSealedIndex([]planstore.Object{object(index)}, seal)
	if err != nil {
		return Plans{}, err // index.json is not the one the status names
	}
	sets, setsErr := a.loadSets(ctx, index, seal)
	if setsErr == nil {
		return plansOfSets(sets), nil
	}
	sets, err = a.loadCurrent(ctx, index, idx, seal)
	if err != nil && !errors.Is(setsErr, errNoSets) {
		return Plans{}, fmt.Errorf("%w (nor were the other plan sets loaded: %v)", err, setsErr)
	}
	if err != nil {
		return Plans{}, err
	}
	p := plansOfSets(sets)
	if !errors.Is(setsErr, errNoSets) {
		p.SetsRefused = setsErr // the current set serves; the agent says why the others do not
	}
	return p, nil
}

// loadCurrent loads the current set alone, through index.json, which the
// status names.
func (a *API) loadCurrent(ctx context.Context, index *corev1.ConfigMap, idx *planstore.Index, seal planstore.Seal) (planstore.EngineRankSets, error) {
	objects := []planstore.Object{object(index)}
	for _, sh := range idx.Shards {
		if !a.holdsRanks(idx, sh) {
			continue // only the shards of this pod's ranks are read
		}
		cm, err := a.get(ctx, sh.ConfigMap)
		if err != nil {
			return planstore.EngineRankSets{}, err
		}
		objects = append(objects, object(cm))
	}
	return oneSet(planstore.LoadSealedEngineRanks(objects, seal, a.EngineRanks, decodeOptions(a.DecodeLayout)...))
}

// holdsRanks reports whether shard sh holds one of the engine ranks' plans
// (or a rank is invalid, and the loader must say so).
func (a *API) holdsRanks(idx *planstore.Index, sh planstore.Shard) bool {
	d := idx.Layout.Decode
	for _, er := range a.EngineRanks {
		if er >= d.TPSize || d.TPPerDP() < 1 {
			return true
		}
		if r := er % d.TPPerDP(); r >= sh.FirstRank && r <= sh.LastRank {
			return true
		}
	}
	return false
}

// informerResync re-delivers the cached objects now and then; it costs no
// API call (the informer's watch keeps the cache current).
const informerResync = 10 * time.Minute

// Notify starts informers on the pair's plan ConfigMaps and on the PDPair
// and waits for their first lists; changed is called on every add, update
// and delete.
func (a *API) Notify(ctx context.Context, changed func()) error {
	if err := a.notifyPDPair(ctx, changed); err != nil {
		return err
	}
	selector := labels.SelectorFromSet(labels.Set{pdv1.LabelPDPair: a.PDPair}).String()
	factory := informers.NewSharedInformerFactoryWithOptions(a.Client, informerResync,
		informers.WithNamespace(a.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := factory.Core().V1().ConfigMaps()
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
			return fmt.Errorf("watching %s: the %v cache did not sync", a.Describe(), typ)
		}
	}
	lister := inf.Lister().ConfigMaps(a.Namespace)
	a.lister.Store(&lister)
	changed()
	return nil
}

func (a *API) get(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	var (
		cm  *corev1.ConfigMap
		err error
	)
	if l := a.lister.Load(); l != nil {
		cm, err = (*l).Get(name)
	} else {
		cm, err = a.Client.CoreV1().ConfigMaps(a.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", a.Namespace, name, err)
	}
	return cm, nil
}

func object(cm *corev1.ConfigMap) planstore.Object {
	return planstore.Object{Name: cm.Name, Data: cm.Data, BinaryData: cm.BinaryData}
}

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
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// ConfigMaps of someone else's under a pair's plan names. Decode pods
// project every plan name (the index and all shard names), so anyone who
// can create ConfigMaps in the namespace can put files where agents look.
// Agents load only the index the operator sealed, so such a ConfigMap is
// never loaded; the PlanNamesClear condition names it so that someone
// removes it.
//
// The manager's cache holds only labelled ConfigMaps, and a ConfigMap of
// someone else's need not carry any label, so neither an event nor the
// cache says when one appears. Two things find it instead, each listing a
// namespace's ConfigMaps, metadata only, a page of listPage at a time (so
// that what the manager holds at once is bounded by a page, however many
// ConfigMaps, with however large annotations, the namespace has):
//   - a reconcile lists the pair's namespace when the pair's generation
//     changed, its plans ran into someone else's ConfigMap, or its last
//     look is older than ForeignScanInterval; other reconciles (agent
//     rechecks every few seconds) reuse the last look (foreignLooks);
//   - a scan does the same every ForeignScanInterval for each namespace
//     holding PDPairs, records what it found as each pair's last look, and
//     enqueues a pair only when that differs from what the pair's status
//     says: a handful of list requests a minute, not a reconcile (with its
//     agent probes) of every pair.
// Watching every ConfigMap of the cluster instead would cost an informer
// holding the metadata of all of them, and a watch event for every write
// to any of them.

// DefaultForeignScanInterval bounds how long a ConfigMap of someone else's
// under a plan name goes unreported when nothing else changes.
const DefaultForeignScanInterval = time.Minute

// maxForeignInMessage bounds how many ConfigMaps the condition names.
const maxForeignInMessage = 10

var corev1ConfigMapListGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMapList"}

// foreignObservation is what one reconcile found under the pair's plan
// names; listed is false when the ConfigMaps could not be listed.
type foreignObservation struct {
	objects []foreignObject
	listed  bool
}

// observeForeign is the pair's last look at its plan names, looking again
// (listing the namespace) when it is due: force (the plans ran into
// someone else's ConfigMap), another generation, or older than the scan
// interval.
func (r *PDPairReconciler) observeForeign(ctx context.Context, pair *pdv1.PDPair, force bool) foreignObservation {
	key := client.ObjectKeyFromObject(pair)
	if obs, ok := r.looks.fresh(key, pair, r.foreignInterval()); ok && !force {
		return obs
	}
	found, err := foreignInNamespace(ctx, r.APIReader, pair.Namespace, []*pdv1.PDPair{pair})
	if err != nil {
		log.FromContext(ctx).Error(err, "looking for foreign ConfigMaps under the plan names")
		return foreignObservation{}
	}
	obs := foreignObservation{objects: found[key], listed: true}
	r.looks.set(key, pair, obs)
	return obs
}

func (r *PDPairReconciler) foreignInterval() time.Duration {
	if r.ForeignScanInterval > 0 {
		return r.ForeignScanInterval
	}
	return DefaultForeignScanInterval
}

// foreignObject is a ConfigMap under a plan name that the pair may not claim.
type foreignObject struct{ name, why string }

// listPage is how many ConfigMaps' metadata one list request returns: a
// namespace user can give each up to 256 KiB of annotations.
const listPage = 50

// foreignInNamespace lists a namespace's ConfigMaps, metadata only, a page
// at a time, and picks for each pair the foreign ones under its plan
// names, sorted by name. Only the picks outlive a page.
func foreignInNamespace(ctx context.Context, c client.Reader, namespace string, pairs []*pdv1.PDPair) (map[types.NamespacedName][]foreignObject, error) {
	out := map[types.NamespacedName][]foreignObject{}
	cont := ""
	for {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1ConfigMapListGVK)
		if err := c.List(ctx, list, client.InNamespace(namespace), client.Limit(listPage), client.Continue(cont)); err != nil {
			return nil, fmt.Errorf("listing the ConfigMaps of namespace %s: %w", namespace, err)
		}
		for _, p := range pairs {
			key := client.ObjectKeyFromObject(p)
			out[key] = append(out[key], foreignPlanConfigMaps(list.Items, p)...)
		}
		if cont = list.Continue; cont == "" {
			break
		}
	}
	for k := range out {
		sort.Slice(out[k], func(i, j int) bool { return out[k][i].name < out[k][j].name })
	}
	return out, nil
}

// foreignPlanConfigMaps picks, among a namespace's ConfigMaps, those under
// one of pair's plan names that it may not claim.
func foreignPlanConfigMaps(items []metav1.PartialObjectMetadata, pair *pdv1.PDPair) []foreignObject {
	var out []foreignObject
	for i := range items {
		m := &items[i]
		if _, ok := planRole(pair.Name, m.Name); !ok || claimable(m, pair) {
			continue
		}
		out = append(out, foreignObject{name: m.Name, why: whyForeign(m, pair)})
	}
	return out
}

// whyForeign says what the operator sees of a ConfigMap it may not claim.
func whyForeign(m metav1.Object, pair *pdv1.PDPair) string {
	if ref := metav1.GetControllerOf(m); ref != nil {
		if ref.Kind == "PDPair" && ref.Name == pair.Name {
			return "controlled by an earlier PDPair of this name (uid " + string(ref.UID) + ")"
		}
		return "controlled by " + ref.Kind + " " + ref.Name
	}
	role, _ := planRole(pair.Name, m.GetName())
	return fmt.Sprintf("no controller, labels %s=%q %s=%q (the operator's carry %s=%q %s=%q)",
		pdv1.LabelPDPair, m.GetLabels()[pdv1.LabelPDPair], pdv1.LabelRole, m.GetLabels()[pdv1.LabelRole],
		pdv1.LabelPDPair, pair.Name, pdv1.LabelRole, role)
}

// foreignNames is the set of names as one comparable string.
func foreignNames(objs []foreignObject) string {
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.name
	}
	return strings.Join(names, ",")
}

// setPlanNamesClear writes the PlanNamesClear condition; an observation
// that could not list the ConfigMaps leaves it as it was.
func setPlanNamesClear(pair *pdv1.PDPair, obs foreignObservation) {
	if !obs.listed {
		return
	}
	foreign := obs.objects
	if len(foreign) == 0 {
		setCondition(pair, pdv1.PDPairPlanNamesClear, true, pdv1.ReasonNoForeignConfigMaps,
			"no ConfigMap of someone else's stands under the pair's plan names")
		return
	}
	parts := make([]string, 0, min(len(foreign), maxForeignInMessage))
	for i, o := range foreign {
		if i == maxForeignInMessage {
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", o.name, o.why))
	}
	msg := fmt.Sprintf("%d ConfigMaps the operator did not write stand under the pair's plan names, where decode pods look for plans: %s",
		len(foreign), strings.Join(parts, "; "))
	if more := len(foreign) - len(parts); more > 0 {
		msg += fmt.Sprintf("; and %d more", more)
	}
	msg += ". Agents load only the index the operator sealed, so they are not loaded; delete or rename them"
	setCondition(pair, pdv1.PDPairPlanNamesClear, false, pdv1.ReasonForeignConfigMaps, msg)
}

// foreignReports remembers, per pair, the foreign names its status reports,
// so that the scan enqueues a pair only when that changes.
type foreignReports struct {
	mu    sync.Mutex
	names map[types.NamespacedName]string
}

func newForeignReports() *foreignReports {
	return &foreignReports{names: map[types.NamespacedName]string{}}
}

func (f *foreignReports) set(key types.NamespacedName, names string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.names[key] = names
}

func (f *foreignReports) get(key types.NamespacedName) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.names[key]
	return n, ok
}

func (f *foreignReports) forget(key types.NamespacedName) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.names, key)
}

// foreignScan is the periodic scan; it runs on the leader only (the
// default for a manager's runnables), which is the one that reconciles.
type foreignScan struct {
	r        *PDPairReconciler
	interval time.Duration
	events   chan event.GenericEvent
}

// Start scans every interval until ctx ends.
func (s *foreignScan) Start(ctx context.Context) error {
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			s.scan(ctx)
		}
	}
}

// scan lists each namespace holding PDPairs once, and enqueues each pair
// whose foreign ConfigMaps differ from what it last reported.
func (s *foreignScan) scan(ctx context.Context) {
	var pairs pdv1.PDPairList
	if err := s.r.List(ctx, &pairs); err != nil {
		log.FromContext(ctx).Error(err, "scanning for foreign plan ConfigMaps: listing PDPairs")
		return
	}
	byNamespace := map[string][]*pdv1.PDPair{}
	for i := range pairs.Items {
		p := &pairs.Items[i]
		byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
	}
	for ns, inNS := range byNamespace {
		found, err := foreignInNamespace(ctx, s.r.APIReader, ns, inNS)
		if err != nil {
			log.FromContext(ctx).Error(err, "scanning for foreign plan ConfigMaps")
			continue
		}
		for _, p := range inNS {
			key := client.ObjectKeyFromObject(p)
			s.r.looks.set(key, p, foreignObservation{objects: found[key], listed: true})
			if reported, ok := s.r.foreign.get(key); ok && reported == foreignNames(found[key]) {
				continue
			}
			select {
			case s.events <- event.GenericEvent{Object: p}:
			case <-ctx.Done():
				return
			}
		}
	}
}

// foreignLooks remembers each pair's last look at its plan names, for the
// pair instance (UID) and generation it was taken for, and when.
type foreignLooks struct {
	mu    sync.Mutex
	looks map[types.NamespacedName]foreignLook
}

type foreignLook struct {
	uid        types.UID
	generation int64
	at         time.Time
	obs        foreignObservation
}

func newForeignLooks() *foreignLooks {
	return &foreignLooks{looks: map[types.NamespacedName]foreignLook{}}
}

func (l *foreignLooks) set(key types.NamespacedName, pair *pdv1.PDPair, obs foreignObservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.looks[key] = foreignLook{uid: pair.UID, generation: pair.Generation, at: time.Now(), obs: obs}
}

// fresh is the last look when it was taken for this pair's generation
// less than maxAge ago.
func (l *foreignLooks) fresh(key types.NamespacedName, pair *pdv1.PDPair, maxAge time.Duration) (foreignObservation, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	look, ok := l.looks[key]
	if !ok || look.uid != pair.UID || look.generation != pair.Generation || time.Since(look.at) >= maxAge {
		return foreignObservation{}, false
	}
	return look.obs, true
}

func (l *foreignLooks) forget(key types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.looks, key)
}

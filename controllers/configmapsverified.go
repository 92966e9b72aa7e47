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
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// The manager caches plan ConfigMaps as metadata only (cache.go), so it
// cannot compare a cached ConfigMap's data with what it wants to publish.
// It remembers instead, per ConfigMap, the resourceVersion at which it last
// knew the data to be what it published (its own write's answer, or a
// read that matched): every write by anyone changes the resourceVersion,
// so a cached one still equal to it vouches for the data without reading
// it. Anything else (an edit by someone else, a restart that forgot) costs
// one read of that ConfigMap by name.
//
// The watch event of the manager's own write can arrive before the write's
// answer: while a write is in flight, update events of that ConfigMap are
// held back (seen) rather than passed, and when the answer comes, any of
// them at another resourceVersion (someone else's write in between) asks
// for one more reconcile (endWrite).

// verifiedAt is what is known of one ConfigMap: its data hashed to
// contentHash at resourceVersion rv of the object with uid.
type verifiedAt struct {
	uid         types.UID
	rv          string
	contentHash string
}

// maxSeenInFlight bounds the events held back during one write; past it
// the write is taken to have raced with someone else's.
const maxSeenInFlight = 8

// verifiedEntry is one ConfigMap's verifiedAt, and the resourceVersions of
// the update events held back while the manager's write is in flight.
type verifiedEntry struct {
	at       verifiedAt
	inFlight bool
	seen     []string
}

// verifiedConfigMaps remembers verifiedEntry per pair and ConfigMap name.
type verifiedConfigMaps struct {
	mu    sync.Mutex
	pairs map[types.NamespacedName]map[string]*verifiedEntry
}

func newVerifiedConfigMaps() *verifiedConfigMaps {
	return &verifiedConfigMaps{pairs: map[types.NamespacedName]map[string]*verifiedEntry{}}
}

// entry is the pair's entry for name, made if absent; mu is held.
func (v *verifiedConfigMaps) entry(pair types.NamespacedName, name string) *verifiedEntry {
	if v.pairs[pair] == nil {
		v.pairs[pair] = map[string]*verifiedEntry{}
	}
	e := v.pairs[pair][name]
	if e == nil {
		e = &verifiedEntry{}
		v.pairs[pair][name] = e
	}
	return e
}

// set records that the pair's ConfigMap name held data hashing to
// at.contentHash at at.rv.
func (v *verifiedConfigMaps) set(pair types.NamespacedName, name string, at verifiedAt) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.entry(pair, name).at = at
}

// holds reports whether the ConfigMap name of pair, now at uid and rv, is
// known to hold data hashing to contentHash.
func (v *verifiedConfigMaps) holds(pair types.NamespacedName, name string, uid types.UID, rv, contentHash string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.pairs[pair][name]
	return ok && rv != "" && e.at.uid == uid && e.at.rv == rv && e.at.contentHash == contentHash
}

// beginWrite marks a write of the pair's ConfigMap name in flight.
func (v *verifiedConfigMaps) beginWrite(pair types.NamespacedName, name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(pair, name)
	e.inFlight, e.seen = true, nil
}

// endWrite records the write's answer (at; zero when it failed) and
// reports whether an update event held back meanwhile was at another
// resourceVersion: someone else's write, which the caller reconciles.
func (v *verifiedConfigMaps) endWrite(pair types.NamespacedName, name string, at verifiedAt) (raced bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.entry(pair, name)
	for _, rv := range e.seen {
		raced = raced || rv != at.rv
	}
	raced = raced || len(e.seen) > maxSeenInFlight
	if at.rv != "" {
		e.at = at
	}
	e.inFlight, e.seen = false, nil
	return raced
}

// ownEvent reports whether an update event of the pair's ConfigMap name
// at rv needs no reconcile: it is the manager's own write (the
// resourceVersion recorded), or a write is in flight and it is held back
// until the answer says whose it was.
func (v *verifiedConfigMaps) ownEvent(pair types.NamespacedName, name, rv string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	e, ok := v.pairs[pair][name]
	switch {
	case !ok || rv == "":
		return false
	case e.at.rv == rv:
		return true
	case e.inFlight:
		if len(e.seen) <= maxSeenInFlight {
			e.seen = append(e.seen, rv)
		}
		return true
	}
	return false
}

// drop forgets one ConfigMap (deleted), forget a whole pair.
func (v *verifiedConfigMaps) drop(pair types.NamespacedName, name string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.pairs[pair], name)
}

func (v *verifiedConfigMaps) forget(pair types.NamespacedName) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.pairs, pair)
}

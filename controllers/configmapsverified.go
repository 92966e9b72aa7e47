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

// verifiedAt is what is known of one ConfigMap: its data hashed to
// contentHash at resourceVersion rv of the object with uid.
type verifiedAt struct {
	uid         types.UID
	rv          string
	contentHash string
}

// verifiedConfigMaps remembers verifiedAt per pair and ConfigMap name.
type verifiedConfigMaps struct {
	mu    sync.Mutex
	pairs map[types.NamespacedName]map[string]verifiedAt
}

func newVerifiedConfigMaps() *verifiedConfigMaps {
	return &verifiedConfigMaps{pairs: map[types.NamespacedName]map[string]verifiedAt{}}
}

// set records that the pair's ConfigMap name held data hashing to
// contentHash at v.rv.
func (v *verifiedConfigMaps) set(pair types.NamespacedName, name string, at verifiedAt) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pairs[pair] == nil {
		v.pairs[pair] = map[string]verifiedAt{}
	}
	v.pairs[pair][name] = at
}

// holds reports whether the ConfigMap name of pair, now at uid and rv, is
// known to hold data hashing to contentHash.
func (v *verifiedConfigMaps) holds(pair types.NamespacedName, name string, uid types.UID, rv, contentHash string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.pairs[pair][name]
	return ok && rv != "" && at.uid == uid && at.rv == rv && at.contentHash == contentHash
}

// isOwnWrite reports whether rv is the resourceVersion the manager last
// recorded for the pair's ConfigMap name: the echo of its own write.
func (v *verifiedConfigMaps) isOwnWrite(pair types.NamespacedName, name, rv string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.pairs[pair][name]
	return ok && rv != "" && at.rv == rv
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

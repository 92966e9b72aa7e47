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

// pairMemory holds one value per PDPair instance: a value put under one
// UID is not found under another, so a pair deleted and made again under
// its name starts empty.
type pairMemory[T any] struct {
	mu     sync.Mutex
	values map[types.NamespacedName]uidValue[T]
}

type uidValue[T any] struct {
	uid   types.UID
	value T
}

func (m *pairMemory[T]) get(key types.NamespacedName, uid types.UID) (T, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.values[key]
	if !ok || v.uid != uid {
		var zero T
		return zero, false
	}
	return v.value, true
}

func (m *pairMemory[T]) put(key types.NamespacedName, uid types.UID, value T) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.values == nil {
		m.values = map[types.NamespacedName]uidValue[T]{}
	}
	m.values[key] = uidValue[T]{uid: uid, value: value}
}

func (m *pairMemory[T]) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.values, key)
}

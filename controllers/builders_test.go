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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// pairBuilder builds PDPairs that read like the scenario:
//
//	newPair(ns, "llama").prefill(8, 1).decode(4, 1).kvPair(80, 512, 256, 256).obj()
type pairBuilder struct{ p pdv1.PDPair }

func newPair(namespace, name string) *pairBuilder {
	return &pairBuilder{p: pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}}
}

func (b *pairBuilder) obj() *pdv1.PDPair { return b.p.DeepCopy() }

func (b *pairBuilder) mla() *pairBuilder {
	b.p.Spec.AttentionBackend = pdv1.AttentionMLA
	return b
}

func (b *pairBuilder) backend(a pdv1.AttentionBackend) *pairBuilder {
	b.p.Spec.AttentionBackend = a
	return b
}

func (b *pairBuilder) l15() *pairBuilder {
	b.p.Spec.MLAL15Cache = true
	return b
}

func (b *pairBuilder) tokensPerPage(n int32) *pairBuilder {
	b.p.Spec.TokensPerPage = ptr.To(n)
	return b
}

func (b *pairBuilder) prefill(tp, dp int32) *pairBuilder {
	b.p.Spec.Prefill = pdv1.FleetLayout{TensorParallelSize: tp, DataParallelSize: ptr.To(dp)}
	return b
}

func (b *pairBuilder) decode(tp, dp int32) *pairBuilder {
	b.p.Spec.Decode = pdv1.FleetLayout{TensorParallelSize: tp, DataParallelSize: ptr.To(dp)}
	return b
}

// kv adds a KV buffer group whose two sides share the unit size.
func (b *pairBuilder) kv(kind pdv1.KVBufferKind, count int32, decodeItem, prefillItem, unit int64) *pairBuilder {
	return b.kvGroup(kind, geom(count, decodeItem, prefillItem, unit, unit))
}

// kvPair adds matching TargetK and TargetV groups (one per layer each).
func (b *pairBuilder) kvPair(layers int32, decodeItem, prefillItem, unit int64) *pairBuilder {
	return b.kv(pdv1.KVTargetK, layers, decodeItem, prefillItem, unit).kv(pdv1.KVTargetV, layers, decodeItem, prefillItem, unit)
}

func (b *pairBuilder) kvGroup(kind pdv1.KVBufferKind, g pdv1.BufferGeometry) *pairBuilder {
	b.p.Spec.KVBuffers = append(b.p.Spec.KVBuffers, pdv1.KVBufferGroup{Kind: kind, BufferGeometry: g})
	return b
}

func (b *pairBuilder) state(g pdv1.BufferGeometry) *pairBuilder {
	b.p.Spec.StateBuffers = append(b.p.Spec.StateBuffers, pdv1.StateBufferGroup{BufferGeometry: g})
	return b
}

// edit applies an arbitrary change, for the odd field the builder does not name.
func (b *pairBuilder) edit(f func(*pdv1.PDPair)) *pairBuilder {
	f(&b.p)
	return b
}

// geom is a buffer group's geometry with every field set.
func geom(count int32, decodeItem, prefillItem, decodeUnit, prefillUnit int64) pdv1.BufferGeometry {
	return pdv1.BufferGeometry{
		Count: count, DecodeItemBytes: decodeItem, PrefillItemBytes: ptr.To(prefillItem),
		DecodeUnitBytes: ptr.To(decodeUnit), PrefillUnitBytes: ptr.To(prefillUnit),
	}
}

// gqaP8D4 is fixtures.GQAP8D4 to build on.
func gqaP8D4(namespace, name string) *pairBuilder {
	return &pairBuilder{p: *fixtures.GQAP8D4(namespace, name)}
}

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

package decodepodtest

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// GQAPair is a grouped-query-attention pair: layers K and V buffers of
// 256-byte heads, decodeItemBytes per decode rank. With prefill TP 8, decode
// TP 4 and decodeItemBytes 512 it is Llama-3-70B-like (8 KV heads).
func GQAPair(namespace, name string, prefillTP, decodeTP, layers int32, decodeItemBytes int64) *pdv1.PDPair {
	prefillItem := decodeItemBytes * int64(decodeTP) / int64(prefillTP)
	geom := pdv1.BufferGeometry{
		Count: layers, DecodeItemBytes: decodeItemBytes, PrefillItemBytes: ptr.To(prefillItem),
		DecodeUnitBytes: ptr.To[int64](256), PrefillUnitBytes: ptr.To[int64](256),
	}
	return &pdv1.PDPair{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: pdv1.PDPairSpec{
			Prefill: pdv1.FleetLayout{TensorParallelSize: prefillTP, DataParallelSize: ptr.To[int32](1)},
			Decode:  pdv1.FleetLayout{TensorParallelSize: decodeTP, DataParallelSize: ptr.To[int32](1)},
			KVBuffers: []pdv1.KVBufferGroup{
				{Kind: pdv1.KVTargetK, BufferGeometry: geom},
				{Kind: pdv1.KVTargetV, BufferGeometry: geom},
			},
		},
	}
}

// IncompatiblePair has a decode unit the prefill unit does not match
// (UnitSizeMismatch): the operator marks it LayoutCompatible=False.
func IncompatiblePair(namespace, name string) *pdv1.PDPair {
	p := GQAPair(namespace, name, 8, 4, 4, 512)
	for i := range p.Spec.KVBuffers {
		p.Spec.KVBuffers[i].PrefillUnitBytes = ptr.To[int64](128)
	}
	return p
}

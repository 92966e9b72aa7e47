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

package webhooks_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

func contractPDPair(t *testing.T, ns, name, vector string, decodeRef *pdv1.ConfigMapKeyReference) *pdv1.PDPair {
	t.Helper()
	raw, err := os.ReadFile("../pkg/transferplan/testdata/contract/" + vector + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		PrefillContract, DecodeContract string
		Prefill, Decode                 struct{ TensorParallelSize int32 }
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	p := &pdv1.PDPair{}
	p.Namespace, p.Name = ns, name
	p.Spec.Wire = pdv1.WireCacheContract
	p.Spec.Prefill.TensorParallelSize, p.Spec.Decode.TensorParallelSize = v.Prefill.TensorParallelSize, v.Decode.TensorParallelSize
	p.Spec.CacheContracts = &pdv1.CacheContracts{Prefill: &pdv1.CacheContractSource{Inline: v.PrefillContract}, Decode: &pdv1.CacheContractSource{Inline: v.DecodeContract}}
	if decodeRef != nil {
		p.Spec.CacheContracts.Decode = &pdv1.CacheContractSource{ConfigMapKeyRef: decodeRef}
	}
	return p
}

// Where validation is enforced, an inline contract pair the engine refuses
// is refused at once with its reason under spec.cacheContracts; a
// compatible one, and one whose contract is in a ConfigMap (the operator
// reads that), pass.
func TestPDPairValidationOfContractPairs(t *testing.T) {
	ns := newNamespace(t)
	enforceIn(t, ns)
	ctx := context.Background()
	msg, field := refusedPDPair(t, k8s.Create(ctx, contractPDPair(t, ns, "windows", "refuse-window", nil)))
	wantAll(t, msg, "ContractMismatchGroupSemantics", "sliding_window_tokens differs: prefill 128, decode 64")
	if field != "spec.cacheContracts" {
		t.Errorf("refusal names field %q, want spec.cacheContracts", field)
	}
	if err := k8s.Create(ctx, contractPDPair(t, ns, "gqa", "mha-gqa2-p4-d1-replicas", nil)); err != nil {
		t.Fatalf("a compatible contract pair was refused: %v", err)
	}
	ref := &pdv1.ConfigMapKeyReference{Name: "decode-contract", Key: "contract.json"}
	if err := k8s.Create(ctx, contractPDPair(t, ns, "from-configmap", "refuse-window", ref)); err != nil {
		t.Fatalf("a pair reading a ConfigMap was refused at admission: %v", err)
	}
}

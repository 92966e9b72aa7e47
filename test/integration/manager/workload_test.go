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

package manager

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// layoutMix is the compatible samples plus GQA pairs over a grid of TP sizes
// (8 KV heads of 256 B; prefill TP 1–16, decode TP 1–8): identity,
// fragmented, replica-group, MLA, L1.5, Mamba and DP-attention layouts.
func layoutMix(t *testing.T, root string) []pdv1.PDPairSpec {
	t.Helper()
	var specs []pdv1.PDPairSpec
	files, _ := filepath.Glob(filepath.Join(root, "config", "samples", "pd_*.yaml"))
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		pairs, err := manifest.ReadPDPairs(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range pairs {
			specs = append(specs, p.Spec)
		}
	}
	for _, p := range []int32{1, 2, 4, 8, 16} {
		for _, d := range []int32{1, 2, 4, 8} {
			specs = append(specs, fixtures.Llama70B(p, d))
		}
	}
	return compatibleOnly(specs)
}

// compatibleOnly keeps the tokenspeed specs the planner accepts: the test
// expects every PDPair to become Ready with published plans (the vLLM and
// SGLang samples publish none).
func compatibleOnly(specs []pdv1.PDPairSpec) []pdv1.PDPairSpec {
	var out []pdv1.PDPairSpec
	for _, s := range specs {
		if s.EngineOrDefault() != pdv1.EngineTokenspeed {
			continue
		}
		l, err := tokenspeed.FromSpec(s)
		if err == nil {
			_, err = planv1.Plan(l)
		}
		if err == nil {
			out = append(out, s)
		}
	}
	return out
}

// workload is n PDPairs cycling through the mix, spread over namespaces.
func workload(specs []pdv1.PDPairSpec, n, namespaces int) []*pdv1.PDPair {
	pairs := make([]*pdv1.PDPair, n)
	for i := range pairs {
		pairs[i] = &pdv1.PDPair{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("scale-%d", i%namespaces), Name: fmt.Sprintf("pair-%04d", i)},
			Spec:       *specs[i%len(specs)].DeepCopy(),
		}
	}
	return pairs
}

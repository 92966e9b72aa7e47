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

package app_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/cmd/pdtopo/app/cli"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/test/clitest"
)

// A PDPair `pdtopo pair --engine` writes is one the API server takes (its
// CEL rules refuse fields the engine does not read) and the operator
// judges as the CLI did; routes and graph then show the engine's rank map
// of the cluster's pair. Expectations from docs/engines/*.md, Llama-3.1-70B
// (8 KV heads): vLLM prefill TP 4 → decode TP 2, decode rank 1 reads
// prefill ranks 2 and 3; SGLang prefill TP 4 → decode TP 8 DP-attention 2,
// decode global rank 6 reads prefill attention-TP rank 2, eight decode
// ranks drawn with eight edges; vLLM prefill TP 16 → decode TP 8 refused
// (rule 3).
func TestClusterEnginePairs(t *testing.T) {
	tc := liveCluster(t)
	for _, c := range []struct {
		name   string
		args   []string
		reason string
		rank   string
		reads  []string
		edges  int
	}{
		{"vllm-p4-d2", []string{"--engine", "vllm", "--prefill-tp", "4", "--decode-tp", "2", "--tokens-per-page", "16", "--kv-cache-layout", "HND"}, "", "1",
			[]string{`(?m)^2\s+reads\s+1$`, `(?m)^3\s+reads\s+1$`}, 4},
		{"sglang-p4-d8", []string{"--engine", "sglang", "--prefill-tp", "4", "--decode-tp", "8", "--decode-dp", "2", "--tokens-per-page", "64", "--prefill-pp", "1"}, "", "6",
			[]string{`(?m)^2\s+reads\s+1$`, `Reads 1 prefill rank\(s\), notifies 0\.`}, 8},
		{"vllm-p16-d8", []string{"--engine", "vllm", "--prefill-tp", "16", "--decode-tp", "8", "--tokens-per-page", "16"}, "ReplicatedPrefillKV", "0", nil, 0},
	} {
		_, out, errOut := clitest.Run(t, "", append([]string{"pair", "--name", c.name, "--hf-config", "../testdata/models/llama-3.1-70b.json", "--kv-cache-dtype", "auto"}, c.args...)...)
		pair, err := manifest.ReadPDPair(strings.NewReader(out), "")
		if err != nil {
			t.Fatalf("%s: %v (%s)", c.name, err, errOut)
		}
		pair.Namespace = nsA
		if err := tc.k8s.Create(context.Background(), pair); err != nil {
			t.Fatalf("%s: the API server refuses what pair wrote: %v\n%s", c.name, err, out)
		}
		t.Cleanup(func() { _ = tc.k8s.Delete(context.Background(), pair) })
		got := tc.waitSettled(t, nsA, c.name)
		cond := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
		if cond == nil || (c.reason == "") != (cond.Status == metav1.ConditionTrue) || (c.reason != "" && cond.Reason != c.reason) {
			t.Errorf("%s: LayoutCompatible %+v, want reason %q", c.name, cond, c.reason)
		}
		code, routes, errOut := tc.cli(t, "routes", c.name, "--rank", c.rank, "--context", "live")
		code2, graph, _ := tc.cli(t, "graph", c.name, "--context", "live")
		if c.reason != "" {
			if code != cli.ExitIncompatible || code2 != cli.ExitIncompatible || !strings.Contains(routes, c.reason) {
				t.Errorf("%s: routes exit %d, graph exit %d:\n%s", c.name, code, code2, routes)
			}
			continue
		}
		for _, row := range c.reads {
			if code != cli.ExitOK || !regexp.MustCompile(row).MatchString(routes) {
				t.Errorf("%s: routes (exit %d, %s) lack %s:\n%s", c.name, code, errOut, row, routes)
			}
		}
		if _, edges, dummies := clitest.SVGCounts(t, graph); code2 != cli.ExitOK || edges != c.edges || dummies != 0 {
			t.Errorf("%s: graph exit %d, %d edges %d dummies, want %d edges", c.name, code2, edges, dummies, c.edges)
		}
	}
}

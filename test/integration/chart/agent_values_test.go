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

package chart

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
	"github.com/pdtopo/pdtopo/webhooks"
)

// agentArgs are the manager's --agent-… flags of a rendering, by name.
func agentArgs(t *testing.T, values map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range helmchart.Render(t, release, namespace, values) {
		if o.GetKind() != "Deployment" {
			continue
		}
		for _, a := range helmchart.Manager(t, o).Args {
			if name, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "--agent-") {
				if _, dup := out[name]; dup {
					t.Errorf("%s given twice", name)
				}
				out[name] = value
			}
		}
	}
	return out
}

// The chart's default agent is the webhook's default agent.
func TestChartAgentDefaultsAreTheWebhooks(t *testing.T) {
	def := webhooks.DefaultAgentResources()
	quantity := func(list corev1.ResourceList, name corev1.ResourceName) string {
		if q, ok := list[name]; ok {
			return q.String()
		}
		return ""
	}
	want := map[string]string{
		"--agent-image":             "$(PDTOPO_AGENT_IMAGE)",
		"--agent-image-pull-policy": string(corev1.PullIfNotPresent),
		"--agent-cpu-request":       quantity(def.Requests, corev1.ResourceCPU),
		"--agent-memory-request":    quantity(def.Requests, corev1.ResourceMemory),
		"--agent-cpu-limit":         quantity(def.Limits, corev1.ResourceCPU),
		"--agent-memory-limit":      quantity(def.Limits, corev1.ResourceMemory),
	}
	got := agentArgs(t, nil)
	for flag, v := range want {
		if g, ok := got[flag]; !ok || g != v {
			t.Errorf("%s=%q (given: %v), want %q, the webhook's default", flag, g, ok, v)
		}
	}
	if _, ok := got["--agent-image-pull-secrets"]; ok {
		t.Errorf("pull secrets by default: %v", got)
	}
}

// agentImage.pullPolicy and pullSecrets and agentResources become the
// manager's flags; a quantity set to null is unset ("" is none).
func TestChartAgentValues(t *testing.T) {
	got := agentArgs(t, map[string]any{
		"agentImage": map[string]any{"repository": "reg/agent", "pullPolicy": "Always",
			"pullSecrets": []any{map[string]any{"name": "regcred"}, map[string]any{"name": "mirror"}}},
		"agentResources": map[string]any{
			"requests": map[string]any{"cpu": 0.5, "memory": nil},
			"limits":   map[string]any{"cpu": "2", "memory": "1Gi"},
		},
	})
	want := map[string]string{
		"--agent-image-pull-policy":  "Always",
		"--agent-image-pull-secrets": "regcred,mirror",
		"--agent-cpu-request":        "0.5",
		"--agent-memory-request":     "",
		"--agent-cpu-limit":          "2",
		"--agent-memory-limit":       "1Gi",
	}
	for flag, v := range want {
		if g, ok := got[flag]; !ok || g != v {
			t.Errorf("%s=%q (given: %v), want %q", flag, g, ok, v)
		}
	}
}

func TestChartAgentValuesRefused(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		want   []string
	}{
		{"pull policy", map[string]any{"agentImage": map[string]any{"repository": "reg/agent", "pullPolicy": "Sometimes"}}, []string{"pullPolicy"}},
		{"pull secret name", map[string]any{"agentImage": map[string]any{"repository": "reg/agent", "pullSecrets": []any{map[string]any{"name": "Reg_Cred"}}}}, []string{"pullSecrets", "Reg_Cred"}},
		{"a pull secret as a string", map[string]any{"agentImage": map[string]any{"repository": "reg/agent", "pullSecrets": []any{"regcred"}}}, []string{"pullSecrets"}},
		{"zero CPU", map[string]any{"agentResources": map[string]any{"requests": map[string]any{"cpu": "0"}}}, []string{"agentResources", "cpu"}},
		{"not a quantity", map[string]any{"agentResources": map[string]any{"limits": map[string]any{"memory": "lots"}}}, []string{"agentResources", "lots"}},
		{"a GPU", map[string]any{"agentResources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": 1}}}, []string{"agentResources", "nvidia.com/gpu"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helmchart.Template(t, release, namespace, c.values)
			if err == nil {
				t.Fatalf("rendered without complaint:\n%.400s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the error does not name %q:\n%s", w, out)
				}
			}
		})
	}
}

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

package main

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Without flags the agent is the webhook's default: IfNotPresent, no pull
// secrets, 50m/64Mi requests and a 512Mi memory limit.
func TestAgentFlagsDefaults(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	s := o.agentSidecar
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
	}
	if s.ImagePullPolicy != corev1.PullIfNotPresent || len(s.ImagePullSecrets) != 0 || s.Resources == nil || !equality.Semantic.DeepEqual(*s.Resources, want) {
		t.Errorf("default agent %+v (resources %v), want IfNotPresent, no secrets, %v", s, s.Resources, want)
	}
}

func TestAgentFlags(t *testing.T) {
	o, err := parseFlags([]string{"--agent-image=reg/agent:v2", "--agent-image-pull-policy=Always",
		"--agent-image-pull-secrets=regcred, mirror-cred,", "--agent-cpu-request=100m", "--agent-memory-request=",
		"--agent-cpu-limit=2", "--agent-memory-limit=1Gi"})
	if err != nil {
		t.Fatal(err)
	}
	s := o.agentSidecar
	want := corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("1Gi")},
	}
	if s.Image != "reg/agent:v2" || s.ImagePullPolicy != corev1.PullAlways || !slices.Equal(s.ImagePullSecrets, []string{"regcred", "mirror-cred"}) ||
		!equality.Semantic.DeepEqual(*s.Resources, want) {
		t.Errorf("agent %+v (resources %v), want reg/agent:v2, Always, [regcred mirror-cred], %v", s, s.Resources, want)
	}
	// Every quantity empty: no requests, no limits.
	o, err = parseFlags([]string{"--agent-cpu-request=", "--agent-memory-request=", "--agent-memory-limit="})
	if err != nil || o.agentSidecar.Resources.Requests != nil || o.agentSidecar.Resources.Limits != nil {
		t.Errorf("no quantities: %v, resources %v", err, o.agentSidecar.Resources)
	}
}

func TestAgentFlagsRefused(t *testing.T) {
	for args, want := range map[string]string{
		"--agent-image-pull-policy=Sometimes":    `--agent-image-pull-policy must be Always, IfNotPresent or Never, got "Sometimes"`,
		"--agent-image-pull-secrets=Reg_Cred":    `--agent-image-pull-secrets: "Reg_Cred" is not a Secret name`,
		"--agent-cpu-request=lots":               `--agent-cpu-request must be a positive quantity (like 100m or 128Mi), got "lots"`,
		"--agent-memory-limit=0":                 `--agent-memory-limit must be a positive quantity`,
		"--agent-memory-request=1Gi":             "--agent-memory-request 1Gi is above --agent-memory-limit 512Mi",
		"--agent-cpu-limit=10m":                  "--agent-cpu-request 50m is above --agent-cpu-limit 10m",
		"--agent-cpu-request=-1":                 `--agent-cpu-request must be a positive quantity`,
		"--agent-image-pull-secrets=ok,not/this": `"not/this" is not a Secret name`,
	} {
		if _, err := parseFlags([]string{args}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
}

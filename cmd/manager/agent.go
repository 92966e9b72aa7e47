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
	"errors"
	"flag"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pdtopo/pdtopo/webhooks"
)

// agentOptions are the flags that decide the injected receiver agent: its
// image, how it is pulled, and its resources.
type agentOptions struct {
	image       string
	pullPolicy  string
	pullSecrets string
	// quantities by flag name, "" for none.
	cpuRequest, memoryRequest, cpuLimit, memoryLimit string
}

func (a *agentOptions) bindFlags(fs *flag.FlagSet) {
	def := webhooks.DefaultAgentResources()
	quantity := func(list corev1.ResourceList, name corev1.ResourceName) string {
		if q, ok := list[name]; ok {
			return q.String()
		}
		return ""
	}
	fs.StringVar(&a.image, "agent-image", "ghcr.io/pdtopo/receiver-agent:dev", "receiver-agent image injected into decode pods")
	fs.StringVar(&a.pullPolicy, "agent-image-pull-policy", string(corev1.PullIfNotPresent), "the injected agent's imagePullPolicy: Always, IfNotPresent or Never")
	fs.StringVar(&a.pullSecrets, "agent-image-pull-secrets", "",
		"comma-separated Secrets (in each decode pod's namespace) for pulling --agent-image, added to the pod's imagePullSecrets")
	fs.StringVar(&a.cpuRequest, "agent-cpu-request", quantity(def.Requests, corev1.ResourceCPU), "the injected agent's CPU request (empty: none)")
	fs.StringVar(&a.memoryRequest, "agent-memory-request", quantity(def.Requests, corev1.ResourceMemory), "the injected agent's memory request (empty: none)")
	fs.StringVar(&a.cpuLimit, "agent-cpu-limit", quantity(def.Limits, corev1.ResourceCPU), "the injected agent's CPU limit (empty: none)")
	fs.StringVar(&a.memoryLimit, "agent-memory-limit", quantity(def.Limits, corev1.ResourceMemory), "the injected agent's memory limit (empty: none)")
}

// sidecar checks the flags and returns what the webhook injects. Mistakes
// the API server would only report when a decode pod is created (a request
// above its limit, a policy or Secret name it refuses) are refused here, at
// start, naming the flag.
func (a *agentOptions) sidecar() (webhooks.AgentSidecar, error) {
	s := webhooks.AgentSidecar{Image: a.image}
	switch p := corev1.PullPolicy(a.pullPolicy); p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		s.ImagePullPolicy = p
	default:
		return s, fmt.Errorf("--agent-image-pull-policy must be Always, IfNotPresent or Never, got %q", a.pullPolicy)
	}
	for _, name := range strings.Split(a.pullSecrets, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return s, fmt.Errorf("--agent-image-pull-secrets: %q is not a Secret name: %s", name, strings.Join(errs, "; "))
		}
		s.ImagePullSecrets = append(s.ImagePullSecrets, name)
	}
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	var errs []error
	for _, q := range []struct {
		flag, value string
		list        corev1.ResourceList
		name        corev1.ResourceName
	}{
		{"--agent-cpu-request", a.cpuRequest, res.Requests, corev1.ResourceCPU},
		{"--agent-memory-request", a.memoryRequest, res.Requests, corev1.ResourceMemory},
		{"--agent-cpu-limit", a.cpuLimit, res.Limits, corev1.ResourceCPU},
		{"--agent-memory-limit", a.memoryLimit, res.Limits, corev1.ResourceMemory},
	} {
		if q.value == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.value)
		if err != nil || v.Sign() <= 0 {
			errs = append(errs, fmt.Errorf("%s must be a positive quantity (like 100m or 128Mi), got %q", q.flag, q.value))
			continue
		}
		q.list[q.name] = v
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, hasReq := res.Requests[name]
		limit, hasLimit := res.Limits[name]
		if hasReq && hasLimit && req.Cmp(limit) > 0 {
			errs = append(errs, fmt.Errorf("--agent-%s-request %s is above --agent-%s-limit %s", name, req.String(), name, limit.String()))
		}
	}
	if len(res.Requests) == 0 {
		res.Requests = nil
	}
	if len(res.Limits) == 0 {
		res.Limits = nil
	}
	s.Resources = &res
	return s, errors.Join(errs...)
}

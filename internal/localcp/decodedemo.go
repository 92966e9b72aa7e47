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

package localcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// DecodeDemo is the labelled sample decode pod `make run` creates to show
// injection: the pod as the API server stored it, after the webhook.
type DecodeDemo struct {
	Pod *corev1.Pod
	// Agent is the injected sidecar (nil if the webhook did not inject).
	Agent *corev1.Container
}

// Summary says what happened to the pod in one line, and why it stays Pending.
func (d *DecodeDemo) Summary() string {
	name := d.Pod.Namespace + "/" + d.Pod.Name
	if d.Agent == nil {
		return fmt.Sprintf("decode pod %s was admitted WITHOUT the %s sidecar", name, pdv1.AgentContainerName)
	}
	return fmt.Sprintf("decode pod %s admitted with the %s sidecar (%s, image %s); it stays Pending: the local control plane runs no scheduler or kubelet",
		name, pdv1.AgentContainerName, d.Pod.Annotations[pdv1.AnnotationInjected], d.Agent.Image)
}

// createDecodeDemo creates the pod of file once the PDPair it names is
// Ready (the webhook refuses decode pods of a pair without plans), and reads
// it back.
func createDecodeDemo(ctx context.Context, c client.Client, file string, timeout time.Duration) (*DecodeDemo, error) {
	objs, err := readObjects(file)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 || objs[0].GetKind() != "Pod" {
		return nil, fmt.Errorf("%s must hold exactly one Pod", file)
	}
	var pod corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(objs[0].Object, &pod); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if pod.Namespace == "" {
		pod.Namespace = "default"
	}
	pair := client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[pdv1.LabelPDPair]}
	if err := waitPairReady(ctx, c, pair, timeout); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, &pod); err != nil {
		return nil, fmt.Errorf("creating decode pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	demo := &DecodeDemo{Pod: &pod}
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == pdv1.AgentContainerName {
			demo.Agent = &pod.Spec.InitContainers[i]
		}
	}
	return demo, nil
}

func waitPairReady(ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		var p pdv1.PDPair
		if err := c.Get(ctx, key, &p); err != nil {
			last = err
		} else if ready := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairReady)); ready == nil || ready.ObservedGeneration != p.Generation {
			last = errors.New("not planned yet")
		} else if ready.Status != metav1.ConditionTrue {
			return fmt.Errorf("PDPair %s is not Ready (%s): %s", key, ready.Reason, strings.TrimSpace(ready.Message))
		} else {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("PDPair %s not Ready within %s: %v", key, timeout, last)
		case <-tick.C:
		}
	}
}

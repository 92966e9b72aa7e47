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
	"net/netip"
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
	pod, err := readPodFile(file)
	if err != nil {
		return nil, err
	}
	pair := client.ObjectKey{Namespace: pod.Namespace, Name: pod.Labels[pdv1.LabelPDPair]}
	if err := waitPairReady(ctx, c, pair, timeout); err != nil {
		return nil, err
	}
	if err := c.Create(ctx, pod); err != nil {
		return nil, fmt.Errorf("creating decode pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return &DecodeDemo{Pod: pod, Agent: agentContainer(pod)}, nil
}

// readPodFile reads the one Pod of file, in namespace "default" unless it
// names its own.
func readPodFile(file string) (*corev1.Pod, error) {
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
	return &pod, nil
}

func waitPairReady(ctx context.Context, c client.Client, key client.ObjectKey, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var refused error
	err := waitUntil(ctx, timeout, 200*time.Millisecond, func() error {
		var p pdv1.PDPair
		if err := c.Get(ctx, key, &p); err != nil {
			return err
		}
		ready := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairReady))
		switch {
		case ready == nil || ready.ObservedGeneration != p.Generation:
			return errors.New("not planned yet")
		case ready.Status != metav1.ConditionTrue:
			refused = fmt.Errorf("PDPair %s is not Ready (%s): %s", key, ready.Reason, strings.TrimSpace(ready.Message))
			return stopWaiting{refused}
		}
		return nil
	})
	if err != nil && refused == nil {
		return fmt.Errorf("PDPair %s not Ready within %s: %v", key, timeout, err)
	}
	return err
}

// Demo is one sample decode pod and its data path.
type Demo struct {
	// File is the pod's manifest.
	File string
	// Decode is the pod after admission; DecodeErr says why it could not be
	// shown.
	Decode    *DecodeDemo
	DecodeErr error
	// Traffic is the data path for the pod's pair (nil without PeerPath and
	// AgentPath, or when it could not start: TrafficErr says why).
	Traffic    *Traffic
	TrafficErr error
}

// startDemo creates the i-th sample decode pod and, when the binaries are
// there, runs its agent and a prefill peer on the i-th pod address.
func startDemo(ctx context.Context, c client.Client, o Options, file string, i int) *Demo {
	d := &Demo{File: file}
	d.Decode, d.DecodeErr = createDecodeDemo(ctx, c, file, o.StartTimeout)
	if d.DecodeErr != nil {
		step(o, "the sample decode pod of %s was not created: %v", file, d.DecodeErr)
		return d
	}
	step(o, "%s", d.Decode.Summary())
	if o.PeerPath == "" || o.AgentPath == "" {
		return d
	}
	podIP, err := nthAddress(o.PodIP, i)
	if err == nil {
		d.Traffic, err = startTraffic(ctx, c, o, d.Decode, podIP)
	}
	if d.TrafficErr = err; err != nil {
		step(o, "no KV handshakes shown for %s: %v", file, err)
		return d
	}
	step(o, "prefill peer (log %s/%s) and the pod's agent (log %s/%s, on %s) running; driving rooms on engine ranks %v",
		o.LogDir, d.Traffic.PeerLog, o.LogDir, d.Traffic.AgentLog, podIP, d.Traffic.Ranks)
	return d
}

// nthAddress is the IPv4 address i after first (the pods' agents all bind
// the same probe port, so each needs an address of its own).
func nthAddress(first string, i int) (string, error) {
	ip, err := netip.ParseAddr(first)
	if err != nil || !ip.Is4() {
		return "", fmt.Errorf("pod IP %q: want an IPv4 loopback address", first)
	}
	for range i {
		if ip = ip.Next(); !ip.IsLoopback() {
			return "", fmt.Errorf("no loopback address %d after %s", i, first)
		}
	}
	return ip.String(), nil
}

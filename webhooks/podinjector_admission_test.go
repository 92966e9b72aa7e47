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
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// settle bounds how long the operator may take to plan a small pair.
const settle = 30 * time.Second

// readyPair creates a GQA pair (prefill TP 8, decode TP 4) and waits until
// the operator has published its plans.
func readyPair(t *testing.T, ns, name string) *pdv1.PDPair {
	t.Helper()
	p := fixtures.GQAPair(ns, name, 8, 4, 4, 512)
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return testutil.WaitCondition(t, k8s, settle, client.ObjectKeyFromObject(p), pdv1.PDPairReady, metav1.ConditionTrue)
}

// admit creates the pod and returns it as the API server stored it.
func admit(t *testing.T, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	if err := k8s.Create(context.Background(), pod); err != nil {
		t.Fatalf("creating pod %s: %v", pod.Name, err)
	}
	var got corev1.Pod
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

// refused creates the pod, expects the API server to refuse it, and returns
// the message.
func refused(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	err := k8s.Create(context.Background(), pod)
	if err == nil {
		t.Fatalf("pod %s was admitted; want it refused", pod.Name)
	}
	if !apierrors.IsForbidden(err) {
		t.Fatalf("pod %s: %v; want a webhook refusal (403)", pod.Name, err)
	}
	var got corev1.Pod
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pod), &got); !apierrors.IsNotFound(err) {
		t.Fatalf("refused pod %s exists anyway (%v)", pod.Name, err)
	}
	return err.Error()
}

func wantAll(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("message %q does not say %q", msg, p)
		}
	}
}

// A labelled decode pod comes back with the agent as a native sidecar, the
// plan projection, the shared socket directory and the downward-API pod IP.
func TestLabelledDecodePodGetsTheAgent(t *testing.T) {
	ns := newNamespace(t)
	readyPair(t, ns, "llama")
	sent := fixtures.DecodePod(ns, "decode-0", "llama").
		InitContainer(corev1.Container{Name: "fetch-weights", Image: "fetch:test"}).
		Container(corev1.Container{Name: "router", Image: "router:test"}).Obj()
	sent.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "engine-pull"}}
	pod := admit(t, sent)

	agent := fixtures.AgentContainer(pod)
	if agent == nil || pod.Spec.InitContainers[0].Name != pdv1.AgentContainerName {
		t.Fatalf("init containers %v: want %s first", containerNames(pod.Spec.InitContainers), pdv1.AgentContainerName)
	}
	if agent.RestartPolicy == nil || *agent.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("agent restartPolicy %v, want Always (a native sidecar)", agent.RestartPolicy)
	}
	if agent.Image != testAgentImage {
		t.Errorf("agent image %q, want the manager's --agent-image %q", agent.Image, testAgentImage)
	}
	wantArgs := []string{"--first-rank=0", "--rank-count=4", "--socket-dir=/run/pdtopo", "--status-host=$(POD_IP)",
		"--probe-port=9440", "--plan-dir=/etc/pdtopo/plans",
		"--plan-public-keys=" + testAgent.PlanPublicKeys[0], "--plan-pdpair=" + pod.Labels[pdv1.LabelPDPair], "--plan-min-generation=1",
		"--decode-layout=tp=4,dp=1"}
	if !slices.Equal(agent.Args, wantArgs) {
		t.Errorf("agent args %q, want %q", agent.Args, wantArgs)
	}
	wantFieldEnv(t, agent, map[string]string{"POD_IP": "status.podIP", "POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"})
	wantMount(t, agent, pdv1.AgentPlansVolume, pdv1.AgentPlanDir, true)
	if fixtures.FindVolume(pod, pdv1.AgentSealVolume) != nil {
		t.Errorf("the pod mounts a seal Secret; plans are signed in their index ConfigMap")
	}
	wantMount(t, agent, pdv1.AgentSocketsVolume, pdv1.AgentSocketDir, false)
	wantProbes(t, agent)
	wantRestricted(t, agent)
	// The manager's settings: resources, pull policy, and the agent's pull
	// secret after the pod's own.
	if !equality.Semantic.DeepEqual(agent.Resources, *testAgent.Resources) || agent.ImagePullPolicy != corev1.PullAlways {
		t.Errorf("agent resources %v, pull policy %s; want the manager's %v and Always", agent.Resources, agent.ImagePullPolicy, *testAgent.Resources)
	}
	if want := []corev1.LocalObjectReference{{Name: "engine-pull"}, {Name: "agent-pull"}}; !equality.Semantic.DeepEqual(pod.Spec.ImagePullSecrets, want) {
		t.Errorf("pod imagePullSecrets %v, want %v", pod.Spec.ImagePullSecrets, want)
	}

	// Every other container, init containers included, shares the sockets.
	for _, c := range append(pod.Spec.InitContainers[1:], pod.Spec.Containers...) {
		wantMount(t, &c, pdv1.AgentSocketsVolume, pdv1.AgentSocketDir, false)
		if v := envValue(&c, pdv1.AgentSocketDirEnv); v != pdv1.AgentSocketDir {
			t.Errorf("container %s: %s=%q, want %q", c.Name, pdv1.AgentSocketDirEnv, v, pdv1.AgentSocketDir)
		}
	}
	wantPlanProjection(t, pod, "llama")
	sockets := fixtures.FindVolume(pod, pdv1.AgentSocketsVolume)
	if sockets == nil || sockets.EmptyDir == nil {
		t.Errorf("sockets volume %+v, want an emptyDir", sockets)
	}
	if got := pod.Annotations[pdv1.AnnotationInjected]; got != "first=0,count=4" {
		t.Errorf("annotation %s=%q, want first=0,count=4", pdv1.AnnotationInjected, got)
	}
	// The layout the pod was admitted under, for the operator's counts.
	if got := pod.Annotations[pdv1.AnnotationDecodeLayout]; got != "tp=4,dp=1" {
		t.Errorf("annotation %s=%q, want tp=4,dp=1 (the pair's decode layout at admission)", pdv1.AnnotationDecodeLayout, got)
	}
}

// wantPlanProjection: every possible shard name from the last to the
// first, then the index (its index.json and index.sig only), each
// optional, read-only in one projected volume, so that where a foreign
// ConfigMap under an unused shard name brings keys of the operator's, the
// kubelet keeps the operator's.
func wantPlanProjection(t *testing.T, pod *corev1.Pod, pair string) {
	t.Helper()
	v := fixtures.FindVolume(pod, pdv1.AgentPlansVolume)
	if v == nil || v.Projected == nil {
		t.Fatalf("plans volume %+v, want a projected volume", v)
	}
	var names []string
	for _, s := range v.Projected.Sources {
		if s.ConfigMap == nil || s.ConfigMap.Optional == nil || !*s.ConfigMap.Optional {
			t.Errorf("plan source %+v: want an optional ConfigMap", s)
			continue
		}
		names = append(names, s.ConfigMap.Name)
		wantItems := []corev1.KeyToPath(nil)
		if s.ConfigMap.Name == planstore.IndexConfigMapName(pair) {
			wantItems = []corev1.KeyToPath{{Key: planstore.IndexKey, Path: planstore.IndexKey}, {Key: planstore.SignatureKey, Path: planstore.SignatureKey},
				{Key: planstore.SetsKey, Path: planstore.SetsKey}, {Key: planstore.SetsSignatureKey, Path: planstore.SetsSignatureKey}}
		}
		if !equality.Semantic.DeepEqual(s.ConfigMap.Items, wantItems) {
			t.Errorf("plan source %s projects items %+v, want %+v", s.ConfigMap.Name, s.ConfigMap.Items, wantItems)
		}
	}
	var want []string
	for i := planstore.MaxShardConfigMaps - 1; i >= 0; i-- {
		want = append(want, planstore.ShardConfigMapName(pair, i))
	}
	want = append(want, pair+"-plans")
	if !slices.Equal(names, want) {
		t.Errorf("plan sources %v, want the %d shard names from the last, then the index: %v", names, planstore.MaxShardConfigMaps, want)
	}
}

func wantFieldEnv(t *testing.T, c *corev1.Container, want map[string]string) {
	t.Helper()
	for name, path := range want {
		found := false
		for _, e := range c.Env {
			if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == path {
				found = true
			}
		}
		if !found {
			t.Errorf("container %s: no env %s from the downward API field %s (env %v)", c.Name, name, path, c.Env)
		}
	}
}

func wantMount(t *testing.T, c *corev1.Container, volume, path string, readOnly bool) {
	t.Helper()
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			if m.MountPath != path || m.ReadOnly != readOnly {
				t.Errorf("container %s mounts %s at %s (read-only %v), want %s (read-only %v)", c.Name, volume, m.MountPath, m.ReadOnly, path, readOnly)
			}
			return
		}
	}
	t.Errorf("container %s does not mount %s", c.Name, volume)
}

func wantProbes(t *testing.T, c *corev1.Container) {
	t.Helper()
	port := intstr.FromString(pdv1.AgentProbePortName)
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Port != port {
			t.Errorf("%s probe %+v: want an HTTP GET on port %s", name, p, pdv1.AgentProbePortName)
		}
	}
	if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness path %s, want /readyz", c.ReadinessProbe.HTTPGet.Path)
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness path %s, want /healthz", c.LivenessProbe.HTTPGet.Path)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != pdv1.AgentProbePort || c.Ports[0].Name != pdv1.AgentProbePortName {
		t.Errorf("ports %+v, want %s %d", c.Ports, pdv1.AgentProbePortName, pdv1.AgentProbePort)
	}
}

func wantRestricted(t *testing.T, c *corev1.Container) {
	t.Helper()
	s := c.SecurityContext
	switch {
	case s == nil:
		t.Fatal("no security context")
	case s.RunAsNonRoot == nil || !*s.RunAsNonRoot:
		t.Error("runAsNonRoot is not true")
	case s.ReadOnlyRootFilesystem == nil || !*s.ReadOnlyRootFilesystem:
		t.Error("readOnlyRootFilesystem is not true")
	case s.AllowPrivilegeEscalation == nil || *s.AllowPrivilegeEscalation:
		t.Error("allowPrivilegeEscalation is not false")
	case s.Capabilities == nil || !slices.Equal(s.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(s.Capabilities.Add) > 0:
		t.Errorf("capabilities %+v, want drop ALL", s.Capabilities)
	case s.SeccompProfile == nil || s.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("seccomp %+v, want RuntimeDefault", s.SeccompProfile)
	}
}

func envValue(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

func containerNames(cs []corev1.Container) []string {
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	return names
}

// Pods without both labels never reach the webhook: they are stored exactly
// as sent, even when the pair they half-name does not exist.
func TestPodsWithoutBothLabelsAreUntouched(t *testing.T) {
	ns := newNamespace(t)
	for name, pod := range map[string]*corev1.Pod{
		"no-labels":       fixtures.Pod(ns, "plain").Obj(),
		"pair-label-only": fixtures.Pod(ns, "pair-only").Label(pdv1.LabelPDPair, "missing").Obj(),
		"role-label-only": fixtures.Pod(ns, "role-only").Label(pdv1.LabelRole, pdv1.RoleDecode).Obj(),
		"prefill-role":    fixtures.Pod(ns, "prefill").Label(pdv1.LabelPDPair, "missing").Label(pdv1.LabelRole, "prefill").Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			sent := pod.DeepCopy()
			got := admit(t, pod)
			// The API server defaults fields (pull policy, termination
			// message path); what injection would add must be absent.
			c := got.Spec.Containers
			if len(c) != 1 || len(c[0].Env) != 0 || len(c[0].VolumeMounts) != 0 || !slices.Equal(c[0].Command, sent.Spec.Containers[0].Command) || len(got.Spec.InitContainers) != 0 ||
				fixtures.FindVolume(got, pdv1.AgentPlansVolume) != nil || got.Annotations[pdv1.AnnotationInjected] != "" {
				t.Errorf("pod %s was changed: init %v, volumes %v, annotations %v", name, containerNames(got.Spec.InitContainers), got.Spec.Volumes, got.Annotations)
			}
		})
	}
}

// A decode pod naming a pair that does not exist is refused, naming it.
func TestDecodePodOfMissingPairIsRefused(t *testing.T) {
	ns := newNamespace(t)
	msg := refused(t, fixtures.DecodePod(ns, "orphan", "no-such-pair").Obj())
	wantAll(t, msg, "PDPairNotFound", "no-such-pair", ns)
}

// A decode pod of an incompatible pair is refused with the layout's reason.
func TestDecodePodOfIncompatiblePairIsRefused(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.IncompatiblePair(ns, "fp8-mismatch")
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	got := testutil.WaitCondition(t, k8s, settle, client.ObjectKeyFromObject(p), pdv1.PDPairLayoutCompatible, metav1.ConditionFalse)
	reason := got.Status.Conditions[0].Reason
	for _, c := range got.Status.Conditions {
		if c.Type == string(pdv1.PDPairLayoutCompatible) {
			reason = c.Reason
		}
	}
	msg := refused(t, fixtures.DecodePod(ns, "decode-0", "fp8-mismatch").Obj())
	wantAll(t, msg, "PDPairIncompatible", "fp8-mismatch", reason)
}

// A contract pair waiting for its decode contract from the decode engines
// admits their pods (the agents must run for the operator to read it); one
// waiting only for its prefill's bootstrap server does not.
func TestDecodePodOfPairAwaitingItsDecodeContract(t *testing.T) {
	ns := newNamespace(t)
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := l.Addr().String() // accepts connections, never answers
	defer l.Close()
	for _, c := range []struct {
		name     string
		decode   *pdv1.CacheContractSource
		admitted bool
	}{
		{"awaits-decode", nil, true},
		{"awaits-prefill", &pdv1.CacheContractSource{Inline: string(v.DecodeContract)}, false},
	} {
		b := fixtures.Pair(ns, c.name).Wire(pdv1.WireCacheContract).PrefillTP(4).DecodeTP(2).BootstrapAddress(silent)
		if c.decode != nil {
			b.DecodeContract(*c.decode)
		}
		p := b.Obj()
		if err := k8s.Create(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		testutil.WaitCondition(t, k8s, settle, client.ObjectKeyFromObject(p), pdv1.PDPairLayoutCompatible, metav1.ConditionUnknown)
		pod := fixtures.DecodePod(ns, c.name+"-0", c.name).Obj()
		if !c.admitted {
			wantAll(t, refused(t, pod), "PDPairNotReady", string(pdv1.ReasonContractPending))
			continue
		}
		if got := admit(t, pod); fixtures.AgentContainer(got) == nil {
			t.Errorf("%s: the pod was admitted without the agent", c.name)
		}
	}
}

// Re-injection is a no-op: a pod that already carries the agent (here the
// spec the webhook produced, submitted again) is stored as sent.
func TestReinjectionIsANoOp(t *testing.T) {
	ns := newNamespace(t)
	readyPair(t, ns, "llama")
	first := admit(t, fixtures.DecodePod(ns, "decode-0", "llama").Obj())
	again := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "decode-1", Labels: first.Labels, Annotations: first.Annotations}, Spec: *first.Spec.DeepCopy()}
	got := admit(t, again)
	if !equality.Semantic.DeepEqual(got.Spec.InitContainers, first.Spec.InitContainers) ||
		!equality.Semantic.DeepEqual(got.Spec.Containers, first.Spec.Containers) ||
		!equality.Semantic.DeepEqual(got.Spec.Volumes, first.Spec.Volumes) {
		t.Errorf("re-submitting an injected pod changed it: init %v, volumes %d (was %d)",
			containerNames(got.Spec.InitContainers), len(got.Spec.Volumes), len(first.Spec.Volumes))
	}
}

// Rank ranges: worker-index × ranks-per-pod under LeaderWorkerSet, the
// first-rank annotation otherwise; a range past the decode TP is refused
// naming the numbers.
func TestRankRanges(t *testing.T) {
	ns := newNamespace(t)
	readyPair(t, ns, "llama") // decode TP 4
	admitted := []struct {
		name string
		pod  *fixtures.PodBuilder
		args []string
	}{
		{"lws-worker-1-of-2", fixtures.DecodePod(ns, "lws-1", "llama").RanksPerPod("2").WorkerIndex("1"), []string{"--first-rank=2", "--rank-count=2"}},
		{"lws-leader", fixtures.DecodePod(ns, "lws-0", "llama").RanksPerPod("2").WorkerIndex("0"), []string{"--first-rank=0", "--rank-count=2"}},
		{"first-rank-annotation", fixtures.DecodePod(ns, "annotated", "llama").RanksPerPod("1").FirstRank("3"), []string{"--first-rank=3", "--rank-count=1"}},
		{"lws-label-wins-over-annotation", fixtures.DecodePod(ns, "both", "llama").RanksPerPod("2").WorkerIndex("1").FirstRank("0"), []string{"--first-rank=2", "--rank-count=2"}},
	}
	for _, tc := range admitted {
		t.Run(tc.name, func(t *testing.T) {
			agent := fixtures.AgentContainer(admit(t, tc.pod.Obj()))
			if agent == nil || !slices.Equal(agent.Args[:2], tc.args) {
				t.Fatalf("agent %v, want args starting %q", agent, tc.args)
			}
		})
	}
	refusedCases := []struct {
		name string
		pod  *fixtures.PodBuilder
		want []string
	}{
		{"lws-worker-past-tp", fixtures.DecodePod(ns, "lws-2", "llama").RanksPerPod("2").WorkerIndex("2"),
			[]string{"RankRangeOutOfBounds", "ranks 4..5", "tensorParallelSize 4", "engine ranks 0..3", "worker-index 2 × ranks-per-pod 2"}},
		{"annotation-past-tp", fixtures.DecodePod(ns, "late", "llama").RanksPerPod("2").FirstRank("3"),
			[]string{"RankRangeOutOfBounds", "ranks 3..4", "tensorParallelSize 4"}},
		{"more-ranks-than-tp", fixtures.DecodePod(ns, "huge", "llama").RanksPerPod("8"),
			[]string{"RankRangeOutOfBounds", "ranks 0..7", "tensorParallelSize 4"}},
		{"more-ranks-than-one-agent-serves", fixtures.DecodePod(ns, "wide", "llama").RanksPerPod("65"),
			[]string{"RankRangeOutOfBounds", "65 decode engine ranks", "at most 64", pdv1.AnnotationRanksPerPod}},
		{"ranks-per-pod-not-a-number", fixtures.DecodePod(ns, "nan", "llama").RanksPerPod("four"),
			[]string{"InvalidRankSetting", pdv1.AnnotationRanksPerPod, `"four"`}},
		{"negative-first-rank", fixtures.DecodePod(ns, "neg", "llama").FirstRank("-1"),
			[]string{"InvalidRankSetting", pdv1.AnnotationFirstRank, `"-1"`}},
	}
	for _, tc := range refusedCases {
		t.Run(tc.name, func(t *testing.T) {
			wantAll(t, refused(t, tc.pod.Obj()), tc.want...)
		})
	}
}

// A pod that already uses one of the agent's volume names is refused rather
// than silently rewired.
func TestVolumeNameConflictIsRefused(t *testing.T) {
	ns := newNamespace(t)
	readyPair(t, ns, "llama")
	pod := fixtures.DecodePod(ns, "clash", "llama").
		Volume(corev1.Volume{Name: pdv1.AgentSocketsVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}).Obj()
	wantAll(t, refused(t, pod), "NameConflict", pdv1.AgentSocketsVolume)
}

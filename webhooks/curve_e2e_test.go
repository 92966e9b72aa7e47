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
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	zmq "github.com/pebbe/zmq4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// A decode pod annotated with pd.pdtopo.dev/curve-secret gets that Secret
// mounted into its agent alone, and the agent, run from the admitted
// container's own command line, completes rooms with prefill ranks that
// accept only CURVE clients holding the agent's key. Without the
// annotation's effect the CURVE handshake fails and no room completes.
func TestDecodePodWithCurveSecret(t *testing.T) {
	ns := newNamespace(t)
	key := client.ObjectKey{Namespace: ns, Name: "llama"}
	pair := readyPair(t, ns, key.Name)

	agentPublic, agentSecret, err := zmq.NewCurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	prefillPublic, prefillSecret, err := zmq.NewCurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pdtopo-curve"},
		StringData: map[string]string{"agent.key": agentSecret, "prefill.pub": prefillPublic, "unrelated": "not mounted"},
	}
	if err := k8s.Create(context.Background(), secret); err != nil {
		t.Fatal(err)
	}

	pod := admit(t, fixtures.DecodePod(ns, "decode-0", key.Name).Annotate(pdv1.AnnotationCurveSecret, secret.Name).Obj())
	agentC := fixtures.AgentContainer(pod)
	if agentC == nil || !slices.Contains(agentC.Args, "--curve-keys="+pdv1.AgentCurveDir) {
		t.Fatalf("the agent's args do not turn CURVE on: %v", agentC)
	}
	for _, c := range pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			if m.Name == pdv1.AgentCurveVolume {
				t.Errorf("engine container %q mounts the CURVE keys; only the agent may", c.Name)
			}
		}
	}

	podIP := loopbackPodIP()
	root := t.TempDir()
	volumes := map[string]string{
		pdv1.AgentPlansVolume:   filepath.Join(root, "plans"),
		pdv1.AgentSocketsVolume: filepath.Join(root, "sockets"), pdv1.AgentCurveVolume: filepath.Join(root, "curve"),
	}
	if err := os.Mkdir(volumes[pdv1.AgentSocketsVolume], 0o777); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{pdv1.AgentPlansVolume, pdv1.AgentCurveVolume} {
		if err := kubeletsim.MaterialiseVolume(context.Background(), k8s, pod, v, volumes[v]); err != nil {
			t.Fatal(err)
		}
	}
	files, err := kubeletsim.VisibleFiles(volumes[pdv1.AgentCurveVolume])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(files, ",") != "agent.key,prefill.pub" {
		t.Errorf("the CURVE volume holds %v, want only agent.key and prefill.pub", files)
	}

	agent := runAgentContainer(t, pod, podIP, volumes)
	agent.waitPlan(t, pair.Status.Plan.Hash)
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		t.Fatal(err)
	}
	peer := receivertest.StartPeer(t, l, func(c *prefillpeer.Config) {
		c.Curve = &prefillpeer.CurveKeys{PrefillSecret: prefillSecret, PrefillPublic: prefillPublic, AgentPublic: agentPublic}
	})
	completeRooms(t, agent, peer, []int{0, 1, 2, 3}, pair, 201)
}

// A curve-secret annotation that cannot name a Secret is refused with its
// own code, naming the annotation and the value.
func TestCurveSecretAnnotationMustNameASecret(t *testing.T) {
	ns := newNamespace(t)
	readyPair(t, ns, "llama")
	pod := fixtures.DecodePod(ns, "decode-0", "llama").Annotate(pdv1.AnnotationCurveSecret, "Not_A/Name").Obj()
	err := k8s.Create(context.Background(), pod)
	if err == nil || !strings.Contains(err.Error(), "InvalidCurveSecret") || !strings.Contains(err.Error(), `pd.pdtopo.dev/curve-secret="Not_A/Name"`) {
		t.Fatalf("creating a pod with an invalid curve-secret: %v", err)
	}
}

// A pair annotated pd.pdtopo.dev/require-curve: "true" gets no decode pod
// without the CURVE Secret annotation; pods that ask for CURVE are
// admitted. A value that is not a boolean refuses them all.
func TestPairThatRequiresCurveRefusesPlainDecodePods(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.GQAPair(ns, "secure", 8, 4, 4, 512)
	p.Annotations = map[string]string{pdv1.AnnotationRequireCurve: "true"}
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	testutil.WaitCondition(t, k8s, settle, client.ObjectKeyFromObject(p), pdv1.PDPairReady, metav1.ConditionTrue)

	msg := refused(t, fixtures.DecodePod(ns, "plain", "secure").Obj())
	wantAll(t, msg, "CurveRequired", "PDPair secure", pdv1.AnnotationRequireCurve, pdv1.AnnotationCurveSecret)

	pod := admit(t, fixtures.DecodePod(ns, "encrypted", "secure").Annotate(pdv1.AnnotationCurveSecret, "pdtopo-curve").Obj())
	if c := fixtures.AgentContainer(pod); c == nil || !slices.Contains(c.Args, "--curve-keys="+pdv1.AgentCurveDir) {
		t.Fatalf("the admitted pod's agent does not speak CURVE: %v", c)
	}

	// an ordinary pair in the same namespace is unaffected
	readyPair(t, ns, "open")
	admit(t, fixtures.DecodePod(ns, "plain-open", "open").Obj())

	typo := fixtures.GQAPair(ns, "typo", 8, 4, 4, 512)
	typo.Annotations = map[string]string{pdv1.AnnotationRequireCurve: "yes"}
	if err := k8s.Create(context.Background(), typo); err != nil {
		t.Fatal(err)
	}
	testutil.WaitCondition(t, k8s, settle, client.ObjectKeyFromObject(typo), pdv1.PDPairReady, metav1.ConditionTrue)
	wantAll(t, refused(t, fixtures.DecodePod(ns, "typo-0", "typo").Annotate(pdv1.AnnotationCurveSecret, "pdtopo-curve").Obj()),
		"CurveRequired", "PDPair typo", `"yes"`)
}

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

package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// PodInjectorPath is where the manager's webhook server serves the injector.
const PodInjectorPath = "/mutate-v1-pod-decode-agent"

// The objectSelector keeps every pod but opted-in decode pods away from the
// webhook, so an outage of the manager can never block other workloads.
// +kubebuilder:webhook:path=/mutate-v1-pod-decode-agent,mutating=true,failurePolicy=fail,sideEffects=NoneOnDryRun,groups="",resources=pods,verbs=create,versions=v1,name=decode-agent.pd.pdtopo.dev,admissionReviewVersions=v1,timeoutSeconds=10,patch=`{"objectSelector":{"matchExpressions":[{"key":"pd.pdtopo.dev/pdpair","operator":"Exists"},{"key":"pd.pdtopo.dev/role","operator":"In","values":["decode"]}]}}`
// +kubebuilder:webhookconfiguration:mutating=true,name=mutating-webhook-configuration

// The injector reads PDPairs (through the manager's cache, which the PDPair
// controller already fills).
// +kubebuilder:rbac:groups=pd.pdtopo.dev,resources=pdpairs,verbs=get;list;watch

// PodInjector adds the receiver agent to decode pods as a native sidecar.
type PodInjector struct {
	// Reader reads PDPairs, normally through the manager's cache.
	Reader client.Reader
	// APIReader is asked when Reader misses (optional).
	APIReader client.Reader
	Decoder   admission.Decoder
	Agent     AgentSidecar
	// Recorder, when set, says on the PDPair that a decode pod of an engine
	// without the agent (vllm, sglang) was admitted as it is.
	Recorder recorder.EventRecorder
}

// RegisterPodInjector serves the injector on the manager's webhook server.
func RegisterPodInjector(mgr ctrl.Manager, agent AgentSidecar) error {
	if agent.Image == "" {
		return errors.New("the pod injector needs the agent image (--agent-image)")
	}
	mgr.GetWebhookServer().Register(PodInjectorPath, &webhook.Admission{Handler: &PodInjector{
		Reader:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Decoder:   admission.NewDecoder(mgr.GetScheme()),
		Agent:     agent,
		Recorder:  mgr.GetEventRecorder("pdtopo-pod-injector"),
	}})
	return nil
}

// Handle admits a decode pod with the agent added, or refuses it naming the
// pair and the reason.
func (p *PodInjector) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("only pod creation is handled")
	}
	var pod corev1.Pod
	if err := p.Decoder.Decode(req, &pod); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if hasAgent(&pod) {
		return admission.Allowed("the pod already carries " + pdv1.AgentContainerName)
	}
	// The objectSelector guarantees both labels; checked again so that a
	// misconfigured webhook cannot touch other pods.
	pairName := pod.Labels[pdv1.LabelPDPair]
	if pairName == "" || pod.Labels[pdv1.LabelRole] != pdv1.RoleDecode {
		return admission.Allowed("not a decode pod")
	}
	pair, refused, err := p.fetchPair(ctx, client.ObjectKey{Namespace: req.Namespace, Name: pairName})
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	if refused == nil && !engines.For(pair.Spec).InjectsAgent() {
		// A dry run has no side effects (sideEffects=NoneOnDryRun).
		return p.admitWithoutAgent(req, &pod, pair, engines.For(pair.Spec))
	}
	_, pinned := pod.Annotations[pdv1.AnnotationDecodeLayout]
	if refused == nil {
		refused = keptGenerationVerdict(&pod, pair, pairVerdict(pair))
	}
	if refused == nil {
		refused = pairCurveVerdict(&pod, pair)
	}
	var ranks rankRange
	var layout transferplan.Parallelism
	if refused == nil {
		layout, refused = admittedLayout(&pod, pair)
	}
	if refused == nil {
		ranks, refused = podRanks(&pod, withDecodeLayout(pair, layout))
	}
	if refused == nil {
		refused = injectAgent(&pod, pairName, ranks, p.Agent.signedFor(pair).admittedUnder(layout))
	}
	if refused == nil {
		recordEngineVersion(&pod, pair, pinned)
	}
	if refused != nil {
		logf.FromContext(ctx).Info("decode pod refused", "pdpair", pairName, "reason", refused.reason, "message", refused.message)
		return admission.Denied(refused.Error())
	}
	mutated, err := json.Marshal(&pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, mutated)
}

// hasAgent makes injection idempotent: a pod that already carries the agent
// (injected before, or written by hand) is left exactly as it is.
func hasAgent(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == pdv1.AgentContainerName {
			return true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == pdv1.AgentContainerName {
			return true
		}
	}
	return false
}

// podName is the pod's name, or its generateName prefix before the API
// server has named it.
func podName(pod *corev1.Pod) string {
	if pod.Name != "" {
		return pod.Name
	}
	return pod.GenerateName + "…"
}

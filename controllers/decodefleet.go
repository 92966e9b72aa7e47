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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// A pair's decode fleet: the pods labelled with the pair's name and role
// decode, whose injected agents load the pair's plans. The reconcile
// observes it after publishing (pod status from the cache, which holds only
// decode pods; plan hashes from each agent's probe address) and reports it
// in status.decodeFleet and the DecodeAgentsCurrent condition.

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// fleetObservation is the decode fleet as one reconcile saw it.
type fleetObservation struct {
	status pdv1.DecodeFleetStatus
	// notReady and stale count every lagging pod (status.lagging is capped).
	notReady, stale int
	// currentHash is the plan the agents should run ("" when none is published).
	currentHash string
	// servedHashes are the plans of older generations of another decode
	// layout still served, each with its decode layout: an agent admitted
	// under that layout and running that plan is not stale.
	servedHashes map[string]string
	// usage counts what uses each layout, for status.generations.
	usage layoutUsage
}

// observeFleet lists the pair's decode pods and reads what their agents
// last answered about the plan they run (asking again in the background:
// decodefleet_probes.go). currentHash is the plan just published ("" if
// none); crosses are the cross pairs published beside it.
func (r *PDPairReconciler) observeFleet(ctx context.Context, pair *pdv1.PDPair, currentHash string, crosses []crossPlan) (fleetObservation, error) {
	obs := fleetObservation{currentHash: currentHash, servedHashes: servedPlanHashes(pair, crosses), usage: newLayoutUsage()}
	pods, reachable, err := r.decodePods(ctx, pair)
	if err != nil {
		return obs, err
	}
	probes := r.fleet.observe(pair, reachable)
	for _, pod := range pods {
		obs.add(pod, probes)
	}
	return obs, nil
}

// decodePods lists the pair's decode pods that are not terminating or
// finished, by name, and those among them whose agent can be reached (an
// IP and a pdtopo-agent container).
func (r *PDPairReconciler) decodePods(ctx context.Context, pair *pdv1.PDPair) (pods, reachable []*corev1.Pod, err error) {
	var list corev1.PodList
	if err := r.List(ctx, &list, client.InNamespace(pair.Namespace),
		client.MatchingLabels{pdv1.LabelPDPair: pair.Name, pdv1.LabelRole: pdv1.RoleDecode}); err != nil {
		return nil, nil, fmt.Errorf("listing the decode pods of %s: %w", pair.Name, err)
	}
	for i := range list.Items {
		pod := &list.Items[i]
		if !pod.DeletionTimestamp.IsZero() || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		pods = append(pods, pod)
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	for _, pod := range pods {
		if pod.Status.PodIP != "" && agentContainerSpec(pod) != nil {
			reachable = append(reachable, pod)
		}
	}
	return pods, reachable, nil
}

// add classifies one pod: its agent ready and on the current plan, not
// ready (with the kubelet's or the agent's reason), or on a stale plan.
func (obs *fleetObservation) add(pod *corev1.Pod, probes map[string]probeResult) {
	obs.status.Pods++
	ready, why := agentReadiness(pod)
	probe, probed := probes[pod.Name]
	if obs.usage.decodePods != nil {
		obs.usage.addPod(pod, probe, probed)
	}
	if ready {
		obs.status.AgentsReady++
	}
	switch {
	case !ready:
		if probed && probe.err == nil && probe.info.PlanError != "" {
			why += "; the agent says: " + quoteAgent(probe.info.PlanError)
		}
		obs.lag(pod, pdv1.ReasonAgentsNotReady, why)
	case !probed:
		obs.lag(pod, pdv1.ReasonAgentsNotReady, "the pod has no IP to reach its agent on")
	case errors.Is(probe.err, errNotAskedYet):
		obs.lag(pod, pdv1.ReasonAgentsNotReady, probe.err.Error())
	case probe.err != nil:
		obs.lag(pod, pdv1.ReasonAgentsNotReady, "the agent's probe address does not answer: "+probe.err.Error())
	case obs.currentHash == "":
		obs.lag(pod, pdv1.ReasonAgentsOnStalePlan, fmt.Sprintf("runs plan %s but the pair has no published plan", short(probe.info.PlanHash)))
	case probe.info.PlanHash != obs.currentHash && !obs.onServedGeneration(probe.info):
		msg := fmt.Sprintf("runs plan %s, not the current %s", short(probe.info.PlanHash), short(obs.currentHash))
		if probe.info.PlanError != "" {
			msg += "; the agent says: " + quoteAgent(probe.info.PlanError)
		}
		obs.lag(pod, pdv1.ReasonAgentsOnStalePlan, msg)
	default:
		obs.status.AgentsCurrent++
	}
}

func (obs *fleetObservation) lag(pod *corev1.Pod, reason pdv1.PDPairConditionReason, msg string) {
	if reason == pdv1.ReasonAgentsNotReady {
		obs.notReady++
	} else {
		obs.stale++
	}
	if len(obs.status.Lagging) < pdv1.MaxLaggingPods {
		obs.status.Lagging = append(obs.status.Lagging, pdv1.LaggingDecodePod{Pod: pod.Name, Reason: reason, Message: truncate(msg, maxLaggingMessage)})
	}
}

// What one lagging pod may add to the status: an agent's plan error can be
// as long as its answer (64 KiB), and 20 of those, each also quoted in the
// condition, would make every status write megabytes. The first sentences
// say what is wrong; the agent's /v1/agent has the whole text.
const (
	maxAgentErrorInStatus = 512
	maxLaggingMessage     = 1024
)

// quoteAgent is an agent's plan error as the status quotes it: cut to
// maxAgentErrorInStatus bytes, saying where the rest is.
func quoteAgent(planError string) string {
	if len(planError) <= maxAgentErrorInStatus {
		return planError
	}
	return truncate(planError, maxAgentErrorInStatus) + fmt.Sprintf(" (%d bytes in all; GET %s on the pod for the rest)", len(planError), pdv1.AgentInfoPath)
}

// agentReadiness is the kubelet's view of the pod's pdtopo-agent container,
// with a reason when it is not ready.
func agentReadiness(pod *corev1.Pod) (bool, string) {
	if agentContainerSpec(pod) == nil {
		return false, "the pod has no " + pdv1.AgentContainerName + " container (created before the webhook, or by hand)"
	}
	for _, cs := range append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if cs.Name != pdv1.AgentContainerName {
			continue
		}
		switch {
		case cs.Ready:
			return true, ""
		case cs.State.Waiting != nil:
			return false, fmt.Sprintf("%s is waiting (%s)", pdv1.AgentContainerName, strings.TrimSpace(cs.State.Waiting.Reason+" "+cs.State.Waiting.Message)) +
				lastExit(cs.LastTerminationState.Terminated)
		case cs.State.Terminated != nil:
			return false, fmt.Sprintf("%s terminated (%s, exit code %d), restarted %d times", pdv1.AgentContainerName, cs.State.Terminated.Reason, cs.State.Terminated.ExitCode, cs.RestartCount) +
				lastExit(cs.State.Terminated)
		default:
			return false, pdv1.AgentContainerName + " is running but not ready (no plan for every rank it serves yet)"
		}
	}
	if pod.Status.Phase == corev1.PodPending || pod.Status.Phase == "" {
		return false, "the pod is Pending (not scheduled or not started yet)"
	}
	return false, "the kubelet reports no status for " + pdv1.AgentContainerName + " yet"
}

// maxExitMessage bounds the agent's last words quoted in a condition.
const maxExitMessage = 300

// lastExit is what the agent said when it last exited: the last line of
// its termination message (the sidecar's policy falls back to the log's
// tail, where the agent prints why it stopped, e.g. a flag it refuses).
func lastExit(t *corev1.ContainerStateTerminated) string {
	if t == nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(t.Message), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	if len(last) > maxExitMessage {
		cut := maxExitMessage
		for cut > 0 && !utf8.RuneStart(last[cut]) {
			cut-- // not inside a character
		}
		last = last[:cut] + "…"
	}
	return fmt.Sprintf("; last exit (code %d): %s", t.ExitCode, last)
}

// agentContainerSpec is the pod's pdtopo-agent container, native sidecar or not.
func agentContainerSpec(pod *corev1.Pod) *corev1.Container {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if cs[i].Name == pdv1.AgentContainerName {
				return &cs[i]
			}
		}
	}
	return nil
}

// short abbreviates a plan hash for messages.
func short(hash string) string {
	if hash == "" {
		return "(none)"
	}
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

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
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// A crash-looping agent's condition message carries why it exits: the last
// line of its termination message (the log's tail), bounded.
func TestAgentReadinessQuotesTheLastExit(t *testing.T) {
	refusal := "receiver-agent: --status-host fd00::7 is an IPv6 address; the v1 KV wire sends decode_ip as text"
	logTail := "{\"level\":\"info\",\"msg\":\"starting\"}\n" + refusal + "\n"
	crashLoop := func(message string) *corev1.Pod {
		pod := fixtures.DecodePod("ns", "decode-0", "pair").WithAgent(9440).Obj()
		pod.Status = fixtures.RunningStatus(false)
		pod.Status.InitContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{
			Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container",
		}}
		pod.Status.InitContainerStatuses[0].LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 1, Reason: "Error", Message: message,
		}}
		return pod
	}
	terminated := crashLoop(logTail)
	terminated.Status.InitContainerStatuses[0].State = terminated.Status.InitContainerStatuses[0].LastTerminationState
	for _, c := range []struct {
		name    string
		pod     *corev1.Pod
		says    []string
		saysNot []string
	}{
		{"crash loop", crashLoop(logTail), []string{"CrashLoopBackOff", "last exit (code 1): " + refusal}, []string{`"level"`}},
		{"terminated", terminated, []string{"terminated (Error, exit code 1)", refusal}, nil},
		{"no message", crashLoop(""), []string{"CrashLoopBackOff"}, []string{"last exit"}},
		{"long message in characters of two bytes", crashLoop("x" + strings.Repeat("é", 5000)), []string{"x" + strings.Repeat("é", (maxExitMessage-1)/2) + "…"}, nil},
		{"long message", crashLoop(strings.Repeat("x", 5000)), []string{strings.Repeat("x", maxExitMessage) + "…"}, []string{strings.Repeat("x", maxExitMessage+1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ready, msg := agentReadiness(c.pod)
			if ready {
				t.Fatalf("%s counted ready", pdv1.AgentContainerName)
			}
			if !utf8.ValidString(msg) {
				t.Errorf("%q is not UTF-8 (cut inside a character)", msg)
			}
			for _, s := range c.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
			for _, s := range c.saysNot {
				if strings.Contains(msg, s) {
					t.Errorf("%q says %q", msg, s)
				}
			}
		})
	}
}

// An agent's plan error is quoted in status.decodeFleet.lagging and the
// condition, bounded: an agent may answer up to 64 KiB, and 20 lagging
// pods each quoting that would make every status write megabytes.
func TestLaggingMessagesAreBounded(t *testing.T) {
	long := "planstore: HashMismatch: " + strings.Repeat("é", 30000) // 60 025 bytes, most of them two-byte characters
	notReady := fixtures.DecodePod("ns", "decode-0", "pair").WithAgent(9440).Obj()
	notReady.Status = fixtures.RunningStatus(false)
	stale := fixtures.DecodePod("ns", "decode-1", "pair").WithAgent(9440).Obj()
	stale.Status = fixtures.RunningStatus(true)
	obs := fleetObservation{currentHash: strings.Repeat("b", 64)}
	probes := map[string]probeResult{
		"decode-0": {info: agentInfo{PlanError: long}},
		"decode-1": {info: agentInfo{PlanHash: strings.Repeat("a", 64), PlanError: long}},
	}
	obs.add(notReady, probes)
	obs.add(stale, probes)
	if len(obs.status.Lagging) != 2 {
		t.Fatalf("lagging %+v", obs.status.Lagging)
	}
	for _, l := range obs.status.Lagging {
		if len(l.Message) > maxLaggingMessage || !utf8.ValidString(l.Message) {
			t.Errorf("%s: a message of %d bytes (valid UTF-8: %v), at most %d wanted", l.Pod, len(l.Message), utf8.ValidString(l.Message), maxLaggingMessage)
		}
		if !strings.Contains(l.Message, "the agent says: planstore: HashMismatch: éé") || !strings.Contains(l.Message, "(60025 bytes in all; GET /v1/agent on the pod for the rest)") {
			t.Errorf("%s: %q does not quote the start of the agent's error and say how long it was", l.Pod, l.Message)
		}
	}
	pair := &pdv1.PDPair{}
	setFleetStatus(pair, obs)
	if c := pair.Status.Conditions[0]; len(c.Message) > laggingInMessage*(maxLaggingMessage+100) {
		t.Errorf("the condition message is %d bytes", len(c.Message))
	}
}

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

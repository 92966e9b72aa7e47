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
	"fmt"
	"strings"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// laggingInMessage bounds how many pods the condition message names; the
// rest are in status.decodeFleet.lagging (itself capped).
const laggingInMessage = 5

// setFleetStatus writes status.decodeFleet and the DecodeAgentsCurrent
// condition from one observation. Not-ready agents take precedence over
// stale ones in the reason: a pod without a working agent is the more
// urgent problem; the message counts both.
func setFleetStatus(pair *pdv1.PDPair, obs fleetObservation) {
	fleet := obs.status
	pair.Status.DecodeFleet = &fleet
	n := fleet.Pods
	switch {
	case n == 0:
		setCondition(pair, pdv1.PDPairDecodeAgentsCurrent, false, pdv1.ReasonNoDecodePods,
			fmt.Sprintf("no pod in namespace %s has the labels %s=%s and %s=%s", pair.Namespace, pdv1.LabelPDPair, pair.Name, pdv1.LabelRole, pdv1.RoleDecode))
	case obs.notReady > 0:
		msg := fmt.Sprintf("%d of %d decode pods' agents are not ready", obs.notReady, n)
		if obs.stale > 0 {
			msg += fmt.Sprintf(", %d run an older plan than %s", obs.stale, short(obs.currentHash))
		}
		setCondition(pair, pdv1.PDPairDecodeAgentsCurrent, false, pdv1.ReasonAgentsNotReady, msg+": "+laggingList(fleet, obs.notReady+obs.stale))
	case obs.stale > 0:
		setCondition(pair, pdv1.PDPairDecodeAgentsCurrent, false, pdv1.ReasonAgentsOnStalePlan,
			fmt.Sprintf("%d of %d decode pods' agents do not run the current plan %s: %s", obs.stale, n, short(obs.currentHash), laggingList(fleet, obs.stale)))
	default:
		setCondition(pair, pdv1.PDPairDecodeAgentsCurrent, true, pdv1.ReasonAgentsCurrent,
			fmt.Sprintf("the agents of all %d decode pods are ready and run plan %s", n, short(obs.currentHash)))
	}
}

// laggingList names the first pods that lag, each with why.
func laggingList(fleet pdv1.DecodeFleetStatus, total int) string {
	var parts []string
	for i, l := range fleet.Lagging {
		if i == laggingInMessage {
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", l.Pod, l.Message))
	}
	s := strings.Join(parts, "; ")
	if more := total - len(parts); more > 0 {
		s += fmt.Sprintf("; and %d more (status.decodeFleet.lagging)", more)
	}
	return s
}

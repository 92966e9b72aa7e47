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
	"strconv"
	"strings"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// signedFor is the sidecar for a pod of pair: its agent refuses plans
// signed for a generation older than the pair's now (a decode pod is only
// admitted once that generation is planned), so a new pod cannot be fed an
// older publication replayed by a tenant.
func (a AgentSidecar) signedFor(pair *pdv1.PDPair) AgentSidecar {
	a.planMinGeneration = pair.Generation
	return a
}

// signedPlanArgs tell the agent whose signature to trust and for which
// pair (the pod's namespace comes from $POD_NAMESPACE): the public keys are
// not secret, so they travel as an argument. Without keys the agent loads
// unsigned plans, as before the operator signed them.
func signedPlanArgs(pair string, agent AgentSidecar) []string {
	if len(agent.PlanPublicKeys) == 0 {
		return nil
	}
	args := []string{"--plan-public-keys=" + strings.Join(agent.PlanPublicKeys, ","), "--plan-pdpair=" + pair}
	if agent.planMinGeneration > 0 {
		args = append(args, "--plan-min-generation="+strconv.FormatInt(agent.planMinGeneration, 10))
	}
	return args
}

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
	"strings"
)

// signedPlanArgs tell the agent whose signature to trust and for which
// pair (the pod's namespace comes from $POD_NAMESPACE): the public keys are
// not secret, so they travel as an argument. Without keys the agent loads
// unsigned plans, as before the operator signed them.
func signedPlanArgs(pair string, agent AgentSidecar) []string {
	if len(agent.PlanPublicKeys) == 0 {
		return nil
	}
	return []string{"--plan-public-keys=" + strings.Join(agent.PlanPublicKeys, ","), "--plan-pdpair=" + pair}
}

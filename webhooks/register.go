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
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"
)

// Options are what the manager's flags decide about its admission handlers.
type Options struct {
	// Agent is the sidecar the pod injector adds.
	Agent AgentSidecar
	// PDPairs says where the PDPair validator refuses at apply time.
	PDPairs PDPairValidation
}

// Register adds every admission handler of this package to the manager's
// webhook server. The manager and the tests both call it, so a handler
// added here is served wherever config/webhook's configurations point; a
// configuration installed without its handler would refuse every request it
// matches.
func Register(mgr ctrl.Manager, o Options) error {
	return errors.Join(
		RegisterPodInjector(mgr, o.Agent),
		RegisterPDPairValidator(mgr, o.PDPairs),
	)
}

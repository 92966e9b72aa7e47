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

package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// MaxPlanGenerations bounds status.generations: the current layout pair
// and the older ones still in use. A rollout has two; more are kept only
// while a rollout is edited again before it finished.
const MaxPlanGenerations = 4

// PlanGeneration is one layout pair the pair serves: the current spec's,
// or an older one whose pods, agents or prefill instances remain
// mid-rollout. The operator keeps publishing plans for every generation
// listed (and for their cross pairs, old prefill × new decode and new
// prefill × old decode, when RolloutCompatible judges them compatible).
type PlanGeneration struct {
	// prefill is the prefill layout of the generation (spec.prefill when it
	// was current).
	// +required
	Prefill FleetLayout `json:"prefill"`

	// decode is the decode layout of the generation (spec.decode when it
	// was current).
	// +required
	Decode FleetLayout `json:"decode"`

	// current is true for the generation of the pair's spec now.
	// +required
	Current bool `json:"current"`

	// specGeneration is the PDPair metadata.generation that introduced the
	// layout pair (later edits that keep both layouts keep it).
	// +optional
	SpecGeneration int64 `json:"specGeneration,omitempty"`

	// planHash is the hash of the generation's plan set (status.plan.hash
	// while it was current); empty for an engine that publishes no plans.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	PlanHash string `json:"planHash,omitempty"`

	// since is when the layout pair was first served.
	// +required
	Since metav1.Time `json:"since"`

	// lastUsed is when something was last seen using the generation (to the
	// minute): for the current one when it became current, for an older one
	// when it stopped being current and then while a decode pod admitted under its
	// decode layout, an agent of that layout or a prefill instance of its
	// prefill layout remains. An older generation nothing uses is dropped
	// after a grace period (docs/rollouts.md).
	// +required
	LastUsed metav1.Time `json:"lastUsed"`

	// decodePods counts the decode pods admitted under the generation's
	// decode layout (annotation pd.pdtopo.dev/decode-layout).
	// +optional
	DecodePods int32 `json:"decodePods"`

	// agents counts the agents that report the generation's decode layout
	// as the one their pod was admitted under (GET /v1/agent decodeLayout).
	// +optional
	Agents int32 `json:"agents"`

	// prefillInstances is how many prefill instances of the generation's
	// prefill layout the agents hold (the most any agent reports).
	// +optional
	PrefillInstances int32 `json:"prefillInstances"`

	// message says why an older generation is kept, or that an edit the
	// engine refuses keeps it serving.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

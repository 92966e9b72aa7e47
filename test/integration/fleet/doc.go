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

// Package fleet measures how fast a PDPair's new plans reach a fleet of
// receiver agents, and what that costs the API server. TestFleetAPISource
// runs many agents' API plan sources (plansource.API followed by
// plansource.Follower, the code `receiver-agent --pdpair` runs, each with
// its own connection and the agent Role's credentials) in this process
// against a real API server and the manager binary, edits the pair's
// layout and times every agent's load of the new plans: 20 agents in every
// `go test ./...`, 1,000 with PDTOPO_FLEET=1 as `make bench-fleet` runs it.
// TestFleetVolumeSource times what the agent's directory watch adds on the
// projected-volume path once the kubelet has swapped the files. Results
// are in docs/benchmarks.md ("Plans to a fleet").
package fleet

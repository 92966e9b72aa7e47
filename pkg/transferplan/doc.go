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

// Package transferplan is the shared vocabulary of KV-cache transfer plans:
// for a prefill fleet and a decode fleet with possibly different
// tensor/data-parallel layouts, which prefill ranks every decode rank pulls
// from (RoutePlan, PlanTarget) and which bytes move (TransferFragment on the
// v1 wire, ContractFragment on the cache-contract wire), the layout record
// published beside them (LayoutRecord), their size budget (PlanSize,
// Budget), their summary (Summary) and the typed refusals (LayoutError and
// the Reason list).
//
// What differs between the engine's two wires lives in one package per
// wire, which never import each other (test/repo keeps it so):
//
//   - pkg/transferplan/v1 plans a v1 layout (buffer item and unit sizes)
//     with the answers of the reference engine (tokenspeed's
//     transfer_plan.py and the route planning of its Mooncake receiver)
//     wherever the reference is right, and its known faults fixed.
//   - pkg/transferplan/contract decodes the two roles' cache transfer
//     contracts as the engine does and plans them as its
//     CacheTransferPlanner does (docs/wire.md, docs/testing.md).
//
// Both planners satisfy Planner. Each wire's package registers its
// WireRules (the form of its layout records, the page cost of its plans)
// when it is linked in, so that nothing here asks which wire a record is on.
//
// The package knows nothing of Kubernetes, ZMQ or HTTP: it takes values and
// returns values or *LayoutError (docs/design.md; test/repo keeps it
// so). pkg/kvwire puts its fragments on the wire.
package transferplan

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

// Package contract plans a prefill/decode pair on the engine's
// cache-contract wire (tokenspeed's later wire) from the two roles' cache
// transfer contracts (Parse, Planner): the decoder refuses exactly what the
// engine's decoder refuses, and the planner returns the engine's
// CacheTransferPlanner answers, or its refusal as a ContractMismatch… or
// Contract… reason. pkg/transferplan/testdata/contract holds the engine's
// own answers for both (docs/wire.md, docs/testing.md).
//
// Importers name it plancontract; it never imports pkg/transferplan/v1.
package contract

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

// Package manager runs the real manager binary (cmd/manager, launched with
// test/testutil.StartManager) against a real API server and checks what only
// the whole process shows: namespaced mode with only its Role
// (TestNamespacedMode), metrics that need an authorized token
// (TestMetricsNeedAuthorizedToken), the manager as the Helm chart renders it
// (TestChartRunsTheManager), over-budget PDPairs refused without taking the
// manager down (TestOverBudgetPairsDoNotTakeTheManagerDown), and scale:
// many PDPairs of mixed layouts at once, measured for wall time, reconciles
// per object and peak memory (TestScale: 100 pairs in every run, 500 with
// PDTOPO_SCALE=1 as `make bench-scale` runs it; results in
// docs/benchmarks.md). One test runs the controller in its own process
// instead, to read the heap after a GC: 300 pairs whose prefills answer
// 256 KiB bogus contracts (TestLiveReadsKeepOnlyWhatTheyValidated).
package manager

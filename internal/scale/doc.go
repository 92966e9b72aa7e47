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

// Package scale holds the operator's scale test: many PDPairs applied at
// once to a real API server, reconciled by the real manager binary, measured
// for wall time, reconciles per object and the manager's peak memory.
// It runs only with PDTOPO_SCALE=1 (`make bench-scale`); results are
// recorded in docs/benchmarks.md.
package scale

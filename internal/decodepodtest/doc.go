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

// Package decodepodtest is the test-helper package for decode pods: builders
// for PDPairs and labelled pods, waits, and a probe server standing in for an
// agent. What the kubelet does for a container (environment, $(VAR)
// expansion, projected ConfigMap volumes) is in internal/kubeletsim, which
// `make run` uses too. Tests of the webhook, the decode-fleet status and the
// end-to-end path use it from their external test packages.
package decodepodtest

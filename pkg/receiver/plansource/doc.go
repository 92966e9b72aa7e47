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

// Package plansource loads the route plans of the decode engine ranks a
// receiver agent serves, from one of three places: a plan file (the output
// of `pdtopo plan -o json`), a directory where the PDPair's plan
// ConfigMaps are projected (following the kubelet's atomic updates), or
// the Kubernetes API. Every rank's plan comes from one publication. A
// Follower keeps the agent on the current plans: it re-reads a source when
// the source says it changed (a file-system watch, an informer) and keeps
// the last good plans when the source breaks.
package plansource

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

// Package modelplan plans model-aware pairs: it turns the buffers
// pkg/modelgeom derives from a model's config into the planner's layout,
// works out which TP sizes the engine can run the model with that plan (the
// fix of a refusal), and ranks every layout of a fleet by what its transfers
// cost (pdtopo advise). Like the two packages it joins, it imports only the
// standard library.
package modelplan

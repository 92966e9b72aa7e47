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

// Package kubeletsim does the two things the kubelet does for a container
// that pdtopo needs done where no kubelet runs (tests, and `make run`'s local
// control plane): resolve a container's environment and expand $(VAR) in its
// command and args, and project ConfigMaps and Secrets into a volume
// directory the way the kubelet's atomic writer does (timestamped directory,
// "..data" symlink swap; a later source's key replaces an earlier one's). It is a non-test package because internal/localcp runs the admitted
// decode pod's agent container with it.
package kubeletsim

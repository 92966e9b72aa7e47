//go:build tools

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

// Package lint pins the linters `make lint` runs (bin/golangci-lint-kal):
// golangci-lint v2 with the Kube API Linter built in as a module plugin, the
// binary the kube-api-linter module's own golangci-lint command builds. It
// is a separate module so that the product's go.mod never carries the
// linters' dependencies.
package lint

import (
	_ "sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter"
)

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

// Package chart tests the Helm chart (charts/pdtopo) with the real Helm CLI:
// that it renders what config/'s kustomizations do, that its values schema
// refuses what it should, that what it renders applies to a real API server
// (server-side dry run), and that install, upgrade and uninstall behave,
// CRD kept. The rendering helpers are in test/testutil/helmchart; the
// manager the chart renders is run for real in test/integration/manager.
package chart

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

// Command pdtopo is the pdtopo command line. `pdtopo plan -f FILE` shows
// whether a PDPair's prefill and decode layouts can exchange KV cache and
// every decode rank's route plan, offline; `plan NAME`, `routes`, `status`
// and `graph` read PDPairs and their published plans from a cluster with the
// usual kubectl flags. Installed as kubectl-pdtopo it works as `kubectl
// pdtopo`. Every verb is a package of app/ (docs/cli-reference.md).
package main

import (
	"os"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app"
)

func main() {
	os.Exit(app.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

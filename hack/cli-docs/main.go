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

// Command cli-docs writes docs/cli-reference.md from pdtopo's command tree:
//
//	go run ./hack/cli-docs > docs/cli-reference.md   (make cli-docs)
package main

import (
	"fmt"
	"os"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app"
)

func main() {
	if err := app.WriteReference(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cli-docs:", err)
		os.Exit(1)
	}
}

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

// Command api-docs writes docs/api-reference.md from the generated CRDs:
//
//	go run ./hack/api-docs > docs/api-reference.md   (make api-docs)
package main

import (
	"fmt"
	"os"

	"github.com/pdtopo/pdtopo/internal/apidocs"
)

func main() {
	dir := "config/crd/bases"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	docs, err := apidocs.ReadCRDs(dir)
	if err == nil {
		err = apidocs.Write(os.Stdout, docs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "api-docs:", err)
		os.Exit(1)
	}
}

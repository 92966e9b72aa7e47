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

// Package refenv reads the reference.env file of each engine's folder under
// conformance/: the one place each engine's commits and golden-data paths
// are written, sourced by the folder's scripts and embedded by its Go
// package.
package refenv

import (
	"fmt"
	"strings"
)

// Env is the text of a reference.env: KEY=VALUE lines, comments and blank
// lines between them, no quoting (the scripts source the file).
type Env string

// Lookup returns the value the file gives key.
func (e Env) Lookup(key string) (string, error) {
	for line := range strings.Lines(string(e)) {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && k == key {
			return v, nil
		}
	}
	return "", fmt.Errorf("reference.env has no %s", key)
}

// Must is Lookup for the keys a package's variables are made of: a key
// missing from the embedded file is a broken build, found by the
// package's first test.
func (e Env) Must(key string) string {
	v, err := e.Lookup(key)
	if err != nil {
		panic(err)
	}
	return v
}

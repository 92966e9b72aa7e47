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

// Package sglang names the SGLang commits whose disaggregation code made
// the golden verdicts of testdata/verdicts.json, the ground truth pdtopo's
// SGLang rules (pkg/engine/sglang/rules) are held to. The commits are written
// once, in reference.env beside this file, which generate.sh sources and
// this package embeds: a test, a tool or a message that needs a commit or
// the verdicts' path takes it from here.
package sglang

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed reference.env
var referenceEnv string

var (
	// Commit is the SGLang commit of python/sglang/srt/disaggregation/
	// whose rule functions judged the golden cases.
	Commit = mustLookup("SGLANG_COMMIT")
	// MooncakeConnCommit is the commit mooncake/conn.py is read at.
	MooncakeConnCommit = mustLookup("SGLANG_MOONCAKE_CONN_COMMIT")
	// Verdicts is where the golden verdicts land, from the repository root.
	Verdicts = mustLookup("SGLANG_VERDICTS")
)

// Reference returns the value reference.env gives key.
func Reference(key string) (string, error) {
	return lookup(referenceEnv, key)
}

// lookup reads key from a shell-style env text: KEY=VALUE lines, comments
// and blank lines between them, no quoting (the scripts source the file).
func lookup(env, key string) (string, error) {
	for line := range strings.Lines(env) {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") && k == key {
			return v, nil
		}
	}
	return "", fmt.Errorf("reference.env has no %s", key)
}

func mustLookup(key string) string {
	v, err := Reference(key)
	if err != nil {
		panic(err)
	}
	return v
}

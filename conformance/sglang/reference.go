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

	"github.com/pdtopo/pdtopo/conformance/refenv"
)

//go:embed reference.env
var referenceEnv string

var reference = refenv.Env(referenceEnv)

var (
	// Commit is the SGLang commit of python/sglang/srt/disaggregation/
	// whose rule functions judged the golden cases.
	Commit = reference.Must("SGLANG_COMMIT")
	// MooncakeConnCommit is the commit mooncake/conn.py is read at.
	MooncakeConnCommit = reference.Must("SGLANG_MOONCAKE_CONN_COMMIT")
	// Verdicts is where the golden verdicts land, from the repository root.
	Verdicts = reference.Must("SGLANG_VERDICTS")
)

// Reference returns the value reference.env gives key.
func Reference(key string) (string, error) {
	return reference.Lookup(key)
}

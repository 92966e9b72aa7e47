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

// Package vllm names the vLLM commits whose NIXL connector made the golden
// verdicts of testdata/verdicts.json, the ground truth pdtopo's vLLM rules
// are held to. The commits are written once, in reference.env beside this
// file, which nixl/generate.sh sources and this package embeds: a test, a
// tool or a message that needs a commit takes it from here.
package vllm

import (
	_ "embed"

	"github.com/pdtopo/pdtopo/conformance/refenv"
)

//go:embed reference.env
var referenceEnv string

var reference = refenv.Env(referenceEnv)

var (
	// NixlCommit is the vLLM commit of the NIXL connector whose rule
	// functions judged the golden cases (nixl/generate.sh).
	NixlCommit = reference.Must("VLLM_NIXL_COMMIT")
	// KVCacheLayoutCommit is the vLLM commit of vllm/v1/kv_cache_layout.py,
	// the layout enum the connector's handshake consults.
	KVCacheLayoutCommit = reference.Must("VLLM_KV_CACHE_LAYOUT_COMMIT")
)

// Reference returns the value reference.env gives key.
func Reference(key string) (string, error) {
	return reference.Lookup(key)
}

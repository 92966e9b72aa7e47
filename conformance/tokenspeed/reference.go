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

// Package tokenspeed names the commits of tokenspeed, the reference engine,
// that pdtopo's two wires are held to. The commits are written once, in
// reference.env beside this file, which the conformance scripts of this
// directory source and this package embeds: a test, a tool or a message
// that needs a commit takes it from here, and a comment names the constant.
package tokenspeed

import (
	_ "embed"

	"github.com/pdtopo/pdtopo/conformance/refenv"
)

//go:embed reference.env
var referenceEnv string

var reference = refenv.Env(referenceEnv)

var (
	// V1Commit is the tokenspeed commit of the v1 (fragment) wire, whose
	// parsers hold pkg/kvwire's v1 encoders (v1wire/run.sh).
	V1Commit = reference.Must("TOKENSPEED_V1_COMMIT")
	// CacheContractCommit is the tokenspeed commit of the cache-contract
	// wire, whose code made the contract golden data
	// (contractwire/vectors.sh, contractplan/generate.sh).
	CacheContractCommit = reference.Must("TOKENSPEED_CACHE_CONTRACT_COMMIT")
)

// Reference returns the value reference.env gives key.
func Reference(key string) (string, error) {
	return reference.Lookup(key)
}

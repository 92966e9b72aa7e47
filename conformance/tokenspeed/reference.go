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
	"fmt"
	"strings"
)

//go:embed reference.env
var referenceEnv string

var (
	// V1Commit is the tokenspeed commit of the v1 (fragment) wire, whose
	// parsers hold pkg/kvwire's v1 encoders (v1wire/run.sh).
	V1Commit = mustLookup("TOKENSPEED_V1_COMMIT")
	// CacheContractCommit is the tokenspeed commit of the cache-contract
	// wire, whose code made the contract golden data
	// (contractwire/vectors.sh, contractplan/generate.sh).
	CacheContractCommit = mustLookup("TOKENSPEED_CACHE_CONTRACT_COMMIT")
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

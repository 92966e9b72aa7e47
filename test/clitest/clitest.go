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

// Package clitest runs the pdtopo command line in-process for the tests of
// its verbs (cmd/pdtopo/app/…), as a user would type it.
package clitest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/cmd/pdtopo/app"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

// Run runs pdtopo with args and stdin and returns its exit code, standard
// output and standard error.
func Run(t testing.TB, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := app.Run(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// StartContractPeer starts a prefill peer serving v's prefill contract on
// wire (on the v1 wire, two KV buffers of 64 bytes instead), closed when the
// test ends.
func StartContractPeer(t *testing.T, v fixtures.ContractPair, wire kvwire.Wire) *prefillpeer.Peer {
	t.Helper()
	cfg := prefillpeer.Config{Wire: wire, WorldSize: v.Prefill.TPSize, DPSize: v.Prefill.DPSize, Contract: v.PrefillContract}
	if wire == kvwire.WireV1 {
		cfg.Contract, cfg.Buffers = nil, kvv1.BufferLens{KVItemLens: []int64{64, 64}}
	}
	p, err := prefillpeer.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

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

package controllers

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// What a live read keeps. A source answers up to 256 KiB of contract; a
// manager that kept every answer until a reconcile judged it would hold
// 256 KiB per pair and role for pairs whose answers are bogus, and run out
// of memory with a few thousand PDPairs. So a read is validated as soon as
// it ends (decoded as the engine decodes it) and only the result kept: for
// a contract the engine refuses, its SHA-256, its size and the refusal
// (quoting at most maxQuotedBytes of it); for one it decodes, its bytes,
// shared by every pair whose sources gave the same ones and counted against
// the plan memory (--max-plan-memory: planMemoryGate.keep).

// maxQuotedBytes is the most of what a target sent that a status message
// or an Event quotes (docs/hardening.md).
const maxQuotedBytes = 120

// keptContract is one contract's bytes, shared by the reads that gave them.
type keptContract struct {
	raw  []byte
	sha  string
	refs int
}

// keptContracts holds the contracts live reads gave, by SHA-256.
type keptContracts struct {
	memory *planMemoryGate // nil: not counted

	mu    sync.Mutex
	bySHA map[string]*keptContract
	bytes int64
}

func newKeptContracts(memory *planMemoryGate) *keptContracts {
	return &keptContracts{memory: memory, bySHA: map[string]*keptContract{}}
}

// validate judges what a source gave and returns only what is kept of it.
// An error means nothing could be kept (the plan memory is full).
func (k *keptContracts) validate(role string, f *fetchedContract) (*liveRead, error) {
	sum := sha256.Sum256(f.raw)
	read := &liveRead{sha256: hex.EncodeToString(sum[:]), size: len(f.raw), from: f.from, tpSize: f.tpSize, dpSize: f.dpSize}
	c, err := plancontract.Parse(f.raw)
	if err != nil {
		read.refusal = refuseLiveContract(role, f.from, err)
		return read, nil
	}
	keep := keptForm(f.raw, c)
	sum = sha256.Sum256(keep)
	kept, err := k.keep(hex.EncodeToString(sum[:]), keep)
	if err != nil {
		return nil, err
	}
	read.kept = kept
	return read, nil
}

// keptForm is what is kept of a contract the engine decodes: its
// re-encoding (to_wire_bytes, what a bootstrap server serves), unless the
// bytes read are shorter. Both decode to the same contract, and plans name
// it by the re-encoding's SHA-256; but a source that pads its answer with
// keys the engine ignores (up to 256 KiB, each pair its own bytes) would
// otherwise fill the kept part of --max-plan-memory with padding, a few
// hundred pairs starving every other pair's live reads.
func keptForm(raw []byte, c *plancontract.CacheContract) []byte {
	if canonical := c.Canonical(); len(canonical) < len(raw) {
		return canonical
	}
	return raw
}

// keep shares the bytes with SHA-256 sha, copying them the first time (the
// slice read may hold the whole answer around them).
func (k *keptContracts) keep(sha string, raw []byte) (*keptContract, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if c := k.bySHA[sha]; c != nil {
		c.refs++
		return c, nil
	}
	n := int64(len(raw))
	if k.memory != nil && !k.memory.keep(n) {
		return nil, fmt.Errorf("the manager keeps %d bytes of live contracts, and %d more do not fit in the part of --max-plan-memory (%d bytes) they may take; read again at the next retry",
			k.bytes, n, k.memory.keptLimit())
	}
	c := &keptContract{raw: bytes.Clone(raw), sha: sha, refs: 1}
	k.bySHA[sha] = c
	k.bytes += n
	liveContractBytesKept.Set(float64(k.bytes))
	return c, nil
}

// release drops a read's hold on its bytes (nil and refusals hold none).
func (k *keptContracts) release(r *liveRead) {
	if r == nil || r.kept == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	c := r.kept
	r.kept = nil
	if c.refs--; c.refs > 0 {
		return
	}
	delete(k.bySHA, c.sha)
	n := int64(len(c.raw))
	k.bytes -= n
	liveContractBytesKept.Set(float64(k.bytes))
	if k.memory != nil {
		k.memory.unkeep(n)
	}
}

// refuseLiveContract is the refusal of a live contract the engine does not
// decode, placed in its role's field and naming the source as
// the engine's ReadContracts does for the spec's contracts, but
// quoting at most maxQuotedBytes of the decoder's message: that message
// quotes the contract, which is what the target sent.
func refuseLiveContract(role, from string, err error) error {
	field := "cacheContracts." + role
	var le *transferplan.LayoutError
	if !errors.As(err, &le) {
		return &transferplan.LayoutError{Reason: transferplan.ReasonContractInvalid, Field: field,
			Message: fmt.Sprintf("%s (%s): the contract does not decode", field, from)}
	}
	msg := le.Message
	if le.Fix != "" { // the fix is worked out from the contract too
		msg = strings.TrimSpace(strings.TrimSuffix(msg, "Fix: "+le.Fix))
	}
	return &transferplan.LayoutError{Reason: le.Reason, Field: field,
		Message: fmt.Sprintf("%s (%s): %s", field, from, cutQuote(msg, maxQuotedBytes))}
}

// cutQuote cuts s to at most limit bytes, not inside a character, marking
// the cut.
func cutQuote(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// checkLive refuses what a live source gave for this pair: a bootstrap
// server of another size than the spec's prefill, or a contract the engine
// does not decode.
func checkLive(pair *pdv1.PDPair, kind pdv1.ContractSource, good *liveRead) error {
	if err := checkLiveParallelism(pair, kind, good); err != nil {
		return err
	}
	return good.refusal
}

// refuseNotAllowed is the refusal of a bootstrap address outside
// --bootstrap-address-allowlist (nil when the last read was not refused
// so). The pair is incompatible until its spec names another address.
func refuseNotAllowed(target string, st liveState) error {
	if failureOutcome(st.failure) != livecontract.ReasonNotAllowed {
		return nil
	}
	return (&transferplan.LayoutError{
		Reason: transferplan.Reason(pdv1.ReasonBootstrapAddressNotAllowed), Field: "prefill.bootstrapAddress",
		Message: fmt.Sprintf("prefill.bootstrapAddress: the manager reads contracts only from the addresses its --bootstrap-address-allowlist names, and %s is not one of them", target),
	}).WithFix("point bootstrapAddress at an allowed Service or address range, give spec.cacheContracts.prefill, or ask the cluster's operator to allow the address")
}

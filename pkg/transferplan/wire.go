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

package transferplan

import (
	"fmt"
	"slices"
	"sync"
)

// Wire names the decode ↔ prefill protocol a pair speaks.
type Wire string

const (
	// WireV1 is the engine's first, fragment wire (item lengths
	// in the bootstrap answer, 8-frame registration of buffer pointers).
	WireV1 Wire = "V1"
	// WireCacheContract is the engine's later wire: cache
	// contracts in the bootstrap answer and the registration, 3-frame
	// pre-allocations carrying a block manifest.
	WireCacheContract Wire = "CacheContract"
)

// Known reports whether w is a wire of the vocabulary; empty is v1, which
// records written before the contract wire never name.
func (w Wire) Known() bool { return w == "" || slices.Contains(Wires(), w) }

// OrV1 is the wire a record means: v1 when it names none.
func (w Wire) OrV1() Wire {
	if w == "" {
		return WireV1
	}
	return w
}

// Wires lists the wires, oldest first.
func Wires() []Wire { return []Wire{WireV1, WireCacheContract} }

// WireRules is what the shared vocabulary asks of a wire's package (v1,
// contract): the form of the wire's layout records and what a page of its
// plans costs. Each package registers its rules when it is linked in
// (RegisterWire in its init, as image formats register their decoders),
// so that this package never tests which wire a record is on; the
// operator, the CLI and planstore link both.
type WireRules interface {
	// MarshalRecord writes a record of the wire as it is published.
	MarshalRecord(r LayoutRecord) ([]byte, error)
	// NewPageCost starts the page cost of the plans of a layout.
	NewPageCost(layout LayoutRecord) PageCost
}

// PageCost follows the plans of one layout, added in decode rank order, and
// says what one page costs a decode rank (Summary.FragmentsPerPage and
// Summary.PageCost).
type PageCost interface {
	Add(plan *RoutePlan)
	Cost() (fragmentsPerPage int, why string)
}

var (
	wiresMu sync.RWMutex
	rules   = map[Wire]WireRules{}
)

// RegisterWire makes a wire's rules known; a wire registers once.
func RegisterWire(w Wire, r WireRules) {
	wiresMu.Lock()
	defer wiresMu.Unlock()
	if _, dup := rules[w]; dup || !w.Known() || w == "" {
		panic(fmt.Sprintf("transferplan: wire %q registered twice or not in Wires()", w))
	}
	rules[w] = r
}

// registered is the rules of a record's wire (empty is v1), or an error
// naming the package that was not linked in.
func registered(w Wire) (WireRules, error) {
	w = w.OrV1()
	wiresMu.RLock()
	defer wiresMu.RUnlock()
	if r, ok := rules[w]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("layout record: wire %q has no rules: import its package under pkg/transferplan (v1, contract)", w)
}

// rulesOf is registered for callers that cannot fail: an unlinked wire's
// page cost is reported as unknown.
func rulesOf(w Wire) WireRules {
	r, err := registered(w)
	if err != nil {
		return unlinkedWire{err}
	}
	return r
}

// unlinkedWire stands in for the rules of a wire whose package is missing.
type unlinkedWire struct{ err error }

func (u unlinkedWire) MarshalRecord(LayoutRecord) ([]byte, error) { return nil, u.err }
func (u unlinkedWire) NewPageCost(LayoutRecord) PageCost          { return u }
func (u unlinkedWire) Add(*RoutePlan)                             {}
func (u unlinkedWire) Cost() (int, string)                        { return 0, u.err.Error() }

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

package contract

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/pdtopo/pdtopo/pkg/pyjson"
)

// A cache transfer contract is what a role of the engine's cache-contract
// wire (tokenspeed's second wire) says about its paged KV cache: the
// memory plan of its cache arena (groups of pages, planes, fields with a
// rank-local shape and dtype), the scheduler-facing spec of each cache
// group, and, for fields sharded over TP ranks, how a field's global extent
// splits (the transfer schema). A prefill publishes its contract through
// its bootstrap server; a decode sends its own in its registration. Both
// sides plan the transfer from the two contracts (docs/wire.md).

// MaxBytes bounds a contract's JSON on the wire, as the engine does.
const MaxBytes = 256 << 10

// MaxTPSize bounds the TP size (per DP group) of either role of a
// contract pair, as the engine's planner does.
const MaxTPSize = 1024

// contractDTypeBytes is the engine's table of cache dtype names and element
// widths; a field's dtype must be one of them.
var contractDTypeBytes = map[string]int64{
	"uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e8m0fnu": 1,
	"bfloat16": 2, "float16": 2, "int32": 4, "float32": 4, "int64": 8, "float64": 8,
}

// CacheContract is a decoded contract. It keeps every value as the engine
// holds it (the engine checks only some types), so that comparing two
// contracts gives the engine's verdict; the planner converts what it
// computes with to integers.
type CacheContract struct {
	prefixGranularity pyjson.Value
	lcmBlockBytes     pyjson.Value
	numLCMBlocks      pyjson.Value
	groups            []contractGroupLayout
	planes            []contractPlane
	fields            []contractField
	groupSpecs        []contractGroupSpec
	transferFields    []contractTransferField
	// canonical is the engine's to_wire_bytes() of the contract.
	canonical []byte
}

type contractGroupLayout struct{ groupID, cacheBlocksPerLCMBlock, pageCount pyjson.Value }

type contractPlane struct{ planeID, bytesPerLCMBlock, arenaOffsetBytes pyjson.Value }

type contractField struct {
	groupID, fieldID, planeID pyjson.Value
	shape                     []pyjson.Value
	dtype                     string
	fieldOffsetBytes          pyjson.Value
	pageStrideBytes           pyjson.Value
}

// contractGroupSpec is one cache group's scheduler-facing spec; absent
// optional keys hold the engine's defaults (None, family "history").
type contractGroupSpec struct {
	groupID, retention, rowsPerPage, entryStrideTokens, slidingWindowTokens,
	family, transferPolicy, checkpointGranularity pyjson.Value
}

// contractPartition says how a sharded field's axis splits: globalExtent
// units in all, in globalParts (for fused fields such as a QKV conv state,
// each part split on its own), every rank holding its share of each part.
type contractPartition struct {
	axisValue pyjson.Value
	// axis is axisValue when it is an int in [0, 2^31), else -1.
	axis         int
	globalExtent pyjson.Value   // an int
	globalParts  []pyjson.Value // ints
}

type contractTransferField struct {
	fieldID   pyjson.Value
	partition contractPartition
}

// Canonical is the contract as the engine re-encodes it (to_wire_bytes):
// what a prefill's bootstrap server serves and a decode registers.
func (c *CacheContract) Canonical() []byte { return c.canonical }

// SHA256 is the hex SHA-256 of Canonical, which identifies the contract in
// published plans.
func (c *CacheContract) SHA256() string {
	sum := sha256.Sum256(c.canonical)
	return hex.EncodeToString(sum[:])
}

// GroupIDs lists the cache groups of the spec in order, as Python's repr of
// each id (a string id prints quoted).
func (c *CacheContract) GroupIDs() []string {
	out := make([]string, len(c.groupSpecs))
	for i, g := range c.groupSpecs {
		out[i] = g.groupID.Repr()
	}
	return out
}

// FieldCount is the number of fields of the memory plan.
func (c *CacheContract) FieldCount() int { return len(c.fields) }

// partitionFor is transfer_schema.partition_for: the first transfer field
// whose id equals fieldID.
func (c *CacheContract) partitionFor(fieldID pyjson.Value) (contractPartition, bool) {
	for _, tf := range c.transferFields {
		if pyjson.Equal(tf.fieldID, fieldID) {
			return tf.partition, true
		}
	}
	return contractPartition{}, false
}

// fieldsForGroup is fields_for_group: the plan's fields of the group in
// field id order. ok is false when the ids cannot be ordered (the engine
// raises a TypeError), e.g. a string id beside a number.
func (c *CacheContract) fieldsForGroup(groupID pyjson.Value) (out []contractField, ok bool) {
	for _, f := range c.fields {
		if pyjson.Equal(f.groupID, groupID) {
			out = append(out, f)
		}
	}
	return out, pyjson.SortStable(out, func(f contractField) pyjson.Value { return f.fieldID })
}

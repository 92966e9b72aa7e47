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
	"bytes"
	"encoding/json"
	"fmt"
)

// LayoutRecord is the layout a set of plans was made for, in the terms a
// prefill's bootstrap server reports (TP/DP, L1.5 flag, item and unit lengths
// per buffer), so that an agent can check a plan against a live prefill.
type LayoutRecord struct {
	AttentionBackend     AttentionBackend `json:"attentionBackend"`
	MLAL15Cache          bool             `json:"mlaL15Cache"`
	TokensPerPage        int              `json:"tokensPerPage"`
	Prefill              Parallelism      `json:"prefill"`
	Decode               Parallelism      `json:"decode"`
	KVBufferKinds        []BufferKind     `json:"kvBufferKinds"`
	PrefillKVItemLens    []int64          `json:"prefillKVItemLens"`
	PrefillKVUnitLens    []int64          `json:"prefillKVUnitLens"`
	DecodeKVItemLens     []int64          `json:"decodeKVItemLens"`
	DecodeKVUnitLens     []int64          `json:"decodeKVUnitLens"`
	PrefillStateItemLens []int64          `json:"prefillStateItemLens"`
	PrefillStateUnitLens []int64          `json:"prefillStateUnitLens"`
	DecodeStateItemLens  []int64          `json:"decodeStateItemLens"`
	DecodeStateUnitLens  []int64          `json:"decodeStateUnitLens"`

	// Wire is empty for v1 pairs (and not written) and WireCacheContract for
	// contract pairs, whose record holds only the parallelism and the
	// SHA-256 of each role's canonical contract (see MarshalJSON).
	Wire                  Wire   `json:"wire,omitempty"`
	PrefillContractSHA256 string `json:"prefillContractSHA256,omitempty"`
	DecodeContractSHA256  string `json:"decodeContractSHA256,omitempty"`
}

// RecordFields is a LayoutRecord's fields without its methods: what a
// wire's MarshalRecord encodes the record through (encoding it as a
// LayoutRecord would call MarshalJSON again).
type RecordFields LayoutRecord

// MarshalJSON writes the record in its wire's form (WireRules.MarshalRecord):
// a v1 record as it always was (the wire and contract hashes are empty and
// omitted), a contract record as its five keys.
func (r LayoutRecord) MarshalJSON() ([]byte, error) {
	rules, err := registered(r.Wire)
	if err != nil {
		return nil, err
	}
	return rules.MarshalRecord(r)
}

// UnmarshalJSON reads either form strictly (unknown keys are refused, as
// the plan loaders refuse them everywhere else).
func (r *LayoutRecord) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f RecordFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	if !f.Wire.Known() {
		return fmt.Errorf("layout record: unknown wire %q", f.Wire)
	}
	*r = LayoutRecord(f)
	return nil
}

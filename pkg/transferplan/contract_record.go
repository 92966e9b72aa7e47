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

// layoutRecordFields has LayoutRecord's fields without its methods.
type layoutRecordFields LayoutRecord

// contractLayoutRecord is what a contract pair's record holds.
type contractLayoutRecord struct {
	Wire                  Wire        `json:"wire"`
	Prefill               Parallelism `json:"prefill"`
	Decode                Parallelism `json:"decode"`
	PrefillContractSHA256 string      `json:"prefillContractSHA256"`
	DecodeContractSHA256  string      `json:"decodeContractSHA256"`
}

// MarshalJSON writes a v1 record as it always was (the wire and contract
// hashes are empty and omitted) and a contract record as its five keys.
func (r LayoutRecord) MarshalJSON() ([]byte, error) {
	if r.Wire == "" || r.Wire == WireV1 {
		return json.Marshal(layoutRecordFields(r))
	}
	return json.Marshal(contractLayoutRecord{Wire: r.Wire, Prefill: r.Prefill, Decode: r.Decode,
		PrefillContractSHA256: r.PrefillContractSHA256, DecodeContractSHA256: r.DecodeContractSHA256})
}

// UnmarshalJSON reads either form strictly (unknown keys are refused, as
// the plan loaders refuse them everywhere else).
func (r *LayoutRecord) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f layoutRecordFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	switch f.Wire {
	case "", WireV1, WireCacheContract:
	default:
		return fmt.Errorf("layout record: unknown wire %q", f.Wire)
	}
	*r = LayoutRecord(f)
	return nil
}

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
	"encoding/json"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func init() { transferplan.RegisterWire(transferplan.WireCacheContract, rules{}) }

// rules is the cache-contract wire's part of the shared vocabulary.
type rules struct{}

// record is what a contract pair's layout record holds: the parallelism and
// the SHA-256 of each role's canonical contract.
type record struct {
	Wire                  transferplan.Wire        `json:"wire"`
	Prefill               transferplan.Parallelism `json:"prefill"`
	Decode                transferplan.Parallelism `json:"decode"`
	PrefillContractSHA256 string                   `json:"prefillContractSHA256"`
	DecodeContractSHA256  string                   `json:"decodeContractSHA256"`
}

// MarshalRecord writes a contract record as its five keys.
func (rules) MarshalRecord(r transferplan.LayoutRecord) ([]byte, error) {
	return json.Marshal(record{Wire: r.Wire, Prefill: r.Prefill, Decode: r.Decode,
		PrefillContractSHA256: r.PrefillContractSHA256, DecodeContractSHA256: r.DecodeContractSHA256})
}

func (rules) NewPageCost(transferplan.LayoutRecord) transferplan.PageCost { return &pageCost{} }

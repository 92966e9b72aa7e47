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

package localapi

import (
	"bytes"
	"encoding/json"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// WireContract is the kind of registration and request of the engine's
// cache-contract wire (docs/wire.md): the registration names the
// engine's cache arena and its contract, a request carries the room's block
// manifest. Both JSON documents travel as JSON values inside the body,
// byte for byte as the engine wrote them, and are sent to prefill ranks
// unchanged.
const WireContract = "contract"

// ContractEngineBody is a registration of kind "contract".
type ContractEngineBody struct {
	Kind      string  `json:"kind"`
	SessionID *string `json:"sessionId"`
	// KVDataPtr is the address of the engine's cache arena (its
	// kv_args.kv_data_ptr).
	KVDataPtr *uint64 `json:"kvDataPtr"`
	// CacheLayout is the engine's cache contract, its to_wire_bytes() as a
	// JSON object.
	CacheLayout json.RawMessage `json:"cacheLayout"`
	// TPSize is the engine's tensor parallel size (optional; see EngineBody).
	TPSize *int `json:"tpSize,omitempty"`
}

// ContractRequestBody is a request of kind "contract".
type ContractRequestBody struct {
	Kind string `json:"kind"`
	// Manifest is the room's block manifest, its to_wire_bytes() as a JSON
	// object.
	Manifest json.RawMessage `json:"manifest"`
}

// parseContractEngine checks a registration of kind "contract". The
// contract is a JSON object within the contract budget; whether the engine
// could decode it is the agent's to check.
func parseContractEngine(raw []byte) (receiver.EngineInfo, error) {
	var b ContractEngineBody
	if err := decodeBytes(raw, &b); err != nil {
		return receiver.EngineInfo{}, err
	}
	switch {
	case b.SessionID == nil:
		return receiver.EngineInfo{}, badBody(`"sessionId" is required ("host:port" of the transfer engine)`)
	case b.KVDataPtr == nil:
		return receiver.EngineInfo{}, badBody(`"kvDataPtr" is required (the address of the cache arena)`)
	case b.CacheLayout == nil:
		return receiver.EngineInfo{}, badBody(`"cacheLayout" is required (the cache contract, as to_wire_bytes() writes it)`)
	}
	if err := checkEmbedded("cacheLayout", b.CacheLayout, plancontract.MaxBytes); err != nil {
		return receiver.EngineInfo{}, err
	}
	tp, err := parseTPSize(b.TPSize)
	if err != nil {
		return receiver.EngineInfo{}, err
	}
	return receiver.EngineInfo{SessionID: *b.SessionID, ArenaPtr: *b.KVDataPtr, Contract: b.CacheLayout, TPSize: tp}, nil
}

// parseContractRequest checks a request of kind "contract": the manifest
// is a JSON object of at most the engine's manifest budget. The agent holds
// it to the engine's contract.
func parseContractRequest(raw []byte) (receiver.TransferRequest, error) {
	var b ContractRequestBody
	if err := decodeBytes(raw, &b); err != nil {
		return receiver.TransferRequest{}, err
	}
	if b.Manifest == nil {
		return receiver.TransferRequest{}, badBody(`"manifest" is required (the block manifest, as to_wire_bytes() writes it)`)
	}
	if err := checkEmbedded("manifest", b.Manifest, kvcontract.MaxManifestBytes); err != nil {
		return receiver.TransferRequest{}, err
	}
	return receiver.TransferRequest{Manifest: b.Manifest}, nil
}

// checkEmbedded refuses an embedded document that is not a JSON object or
// is over its budget (the engine's own bound on it).
func checkEmbedded(field string, doc json.RawMessage, limit int) error {
	if len(doc) > limit {
		return badBody("%q is %d bytes; the engine takes at most %d", field, len(doc), limit)
	}
	if !bytes.HasPrefix(doc, []byte("{")) {
		return badBody("%q must be a JSON object (the engine's to_wire_bytes()), got %s", field, truncateLine(doc))
	}
	return nil
}

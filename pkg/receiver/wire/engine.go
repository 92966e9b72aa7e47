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

package wire

// EngineInfo is what the decode engine tells the agent once, before any
// room: its transfer-engine session and where its memory is. On the v1 wire
// that is one pointer per KV and state buffer; on the cache-contract wire
// (Contract set) the address of its cache arena and its cache contract.
type EngineInfo struct {
	// SessionID is the transfer-engine session, "host:port".
	SessionID     string
	KVDataPtrs    []uint64
	StateDataPtrs []uint64

	// Contract is the decode rank's cache transfer contract on the
	// cache-contract wire (its wire JSON, CacheTransferContract.to_wire_bytes(),
	// sent unchanged in every registration); nil on the v1 wire. The
	// operator reads it from the probe address (EngineContract) when a
	// PDPair leaves the decode contract to the live engines.
	Contract []byte
	// ArenaPtr is the address of the engine's cache arena (its
	// kv_data_ptr) on the cache-contract wire.
	ArenaPtr uint64
	// TPSize is the engine's tensor parallel size as it says it at
	// registration (optional; 0 when not said): held to the decode layout
	// the pod was admitted under and to the plan's.
	TPSize int
}

// TransferRequest is what the engine sends once a room is bootstrapped:
// on the v1 wire the pages to fill and where the request's auxiliary data
// goes, on the cache-contract wire the room's block manifest.
type TransferRequest struct {
	KVIndices       []int64
	AuxIndex        int64
	DecodePrefixLen int64
	// MambaIndices are the state slots to fill; nil when the model has none.
	MambaIndices []int64

	// Manifest is the room's block manifest, its wire JSON as the engine
	// wrote it (to_wire_bytes()), on the cache-contract wire; nil on the v1
	// wire. It is checked against the engine's decode contract and sent as
	// it is. The agent's Request does not keep it once it returns, except for a room
	// still Bootstrapping, whose request it copies: the caller's buffer may
	// be reused.
	Manifest []byte
}

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

package agentclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
)

// The cache-contract wire (docs/wire.md): an engine that sets
// receiver.EngineInfo.Contract (its decode contract, the bytes of
// CacheTransferContract.to_wire_bytes()) and ArenaPtr registers for it, and
// its rooms' requests carry Request.Manifest (the block manifest's
// to_wire_bytes()) instead of page indices. Both documents reach the agent
// compacted, byte for byte otherwise, and the agent checks them.

// WireBytes is what tokenspeed's contract and manifest objects offer; a
// kvwire.Manifest has it too.
type WireBytes interface {
	WireBytes() ([]byte, error)
}

// ContractRequest is the request of a room on the cache-contract wire.
func ContractRequest(manifest WireBytes) (Request, error) {
	raw, err := manifest.WireBytes()
	if err != nil {
		return Request{}, fmt.Errorf("the block manifest: %w", err)
	}
	return Request{Manifest: raw}, nil
}

// engineBody is the registration body of info: kind contract when info
// carries a contract. The contract must be a JSON object (encoding/json
// validates and compacts it).
func engineBody(info receiver.EngineInfo) ([]byte, error) {
	var tp *int // info.TPSize 0: the engine does not say its TP
	if info.TPSize != 0 {
		tp = &info.TPSize
	}
	if info.Contract == nil {
		return json.Marshal(localapi.EngineBody{SessionID: &info.SessionID, KVDataPtrs: nonNil(info.KVDataPtrs), StateDataPtrs: info.StateDataPtrs, TPSize: tp})
	}
	if !json.Valid(info.Contract) {
		return nil, fmt.Errorf("the engine's cache contract (%d bytes) is not JSON", len(info.Contract))
	}
	return json.Marshal(localapi.ContractEngineBody{Kind: localapi.WireContract, SessionID: &info.SessionID,
		KVDataPtr: &info.ArenaPtr, CacheLayout: info.Contract, TPSize: tp})
}

// requestBody is the body of POST /v1/rooms/{room}/request.
func requestBody(req Request) any {
	if req.Manifest != nil {
		return localapi.ContractRequestBody{Kind: localapi.WireContract, Manifest: req.Manifest}
	}
	body := localapi.RequestBody{KVIndices: req.KVIndices, AuxIndex: &req.AuxIndex, DecodePrefixLen: &req.DecodePrefixLen, MambaIndices: req.MambaIndices}
	if body.KVIndices == nil {
		body.KVIndices = []int64{}
	}
	return body
}

// contractRequestLine is a stream request line carrying the manifest,
// compacted into the line (a manifest with newlines would end the line):
// one copy of its bytes, no decoding.
func contractRequestLine(room, ref int64, manifest []byte) ([]byte, error) {
	b := make([]byte, 0, 96+len(manifest))
	b = append(b, `{"op":"request","room":`...)
	b = strconv.AppendInt(b, room, 10)
	b = append(b, `,"ref":`...)
	b = strconv.AppendInt(b, ref, 10)
	b = append(b, `,"request":{"kind":"contract","manifest":`...)
	buf := bytes.NewBuffer(b)
	if err := json.Compact(buf, manifest); err != nil {
		return nil, fmt.Errorf("the block manifest (%d bytes) is not JSON: %w", len(manifest), err)
	}
	return append(buf.Bytes(), '}', '}', '\n'), nil
}

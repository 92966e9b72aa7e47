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
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// engineContract is the engine's own cache contract, read once when it
// registers on the cache-contract wire: the bytes it gave (sent unchanged
// in every registration), the contract as the engine decodes it (for the
// pair check against a live prefill), its SHA-256 (held to the plan's
// decodeContractSHA256) and what checking a block manifest needs of it.
type engineContract struct {
	raw      []byte
	decoded  *plancontract.CacheContract
	sha      string
	manifest kvcontract.ManifestLayout
}

// newEngineContract checks a contract-wire registration the way a prefill
// rank will parse the registration built from it, and the contract the way
// the engine decodes it.
func newEngineContract(info *wire.EngineInfo, advertiseHost string) (*engineContract, error) {
	if len(info.KVDataPtrs) != 0 || len(info.StateDataPtrs) != 0 {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "a cache-contract registration names its arena (kvDataPtr) and contract (cacheLayout), not %d KV and %d state buffer pointers",
			len(info.KVDataPtrs), len(info.StateDataPtrs))
	}
	reg := kvcontract.Registration{DecodeIP: advertiseHost, DecodeStatusPort: 1, SessionID: info.SessionID,
		ArenaPtr: info.ArenaPtr, Contract: info.Contract, DecodeTPSize: 1}
	if err := reg.Validate(); err != nil {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "%s", engineField(err))
	}
	c, err := plancontract.Parse(info.Contract)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "cacheLayout does not decode as the engine decodes a contract: %v", err)
	}
	layout, err := kvcontract.ManifestLayoutFromContract(info.Contract)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "cacheLayout cannot check block manifests: %v", err)
	}
	return &engineContract{raw: info.Contract, decoded: c, sha: c.SHA256(), manifest: layout}, nil
}

// engineField names a registration's problem by the engine API's field.
func engineField(err error) string {
	var field string
	switch e := err.(type) {
	case *kvwire.Error:
		switch e.Field {
		case "session_id":
			field = "sessionId"
		case "arena_ptr":
			field = "kvDataPtr"
		case "cache_layout":
			field = "cacheLayout"
		}
	}
	if field == "" {
		return err.Error()
	}
	return field + ": " + err.Error()
}

// checkEngineContract holds a contract-wire registration to a contract
// plan: the engine's contract must be the decode contract the plan was made
// for, as its hash says.
func checkEngineContract(ec *engineContract, v wire.View) error {
	want := v.Layout().DecodeContractSHA256
	if ec.sha != want {
		return wire.Errorf(wire.CodeContractMismatch,
			"decodeContractSHA256: the engine's cache contract hashes to %s, but the plan (%s) was made for the decode contract %s; publish the engine's contract (its to_wire_bytes()) in the PDPair's spec.cacheContracts.decode, or run the engine the plan was made for",
			ec.sha, wire.ShortHash(v.PlanHash()), want)
	}
	return nil
}

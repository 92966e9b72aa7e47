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

package kvwire

import (
	"encoding/json"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Wire names the handshake a prefill instance speaks (pkg/transferplan's
// vocabulary), as its bootstrap server's parallel-info answer tells it.
// There is no version field: a contract-era server answers with
// cache_layout, a v1 server with item lengths.
type Wire = transferplan.Wire

const (
	// WireV1 is tokenspeed's fragment wire (docs/wire.md), whose messages
	// are pkg/kvwire/v1.
	WireV1 = transferplan.WireV1
	// WireCacheContract is tokenspeed's cache-contract wire (docs/wire.md),
	// whose messages are pkg/kvwire/contract.
	WireCacheContract = transferplan.WireCacheContract
)

// AnswerWire tells the wire of a parallel-info answer (GET
// /route?engine_rank=-1&target_dp_group=-1) from its keys: an answer with
// the key cache_layout is a contract answer (even when its value is null: a
// contract server no rank has registered with yet), any other a v1 answer.
// It decodes nothing else; the wire's own package decodes the answer. A
// body that is not a JSON object is ReasonMalformedJSON.
func AnswerWire(body []byte) (Wire, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil || keys == nil {
		return "", FieldError(KindBootstrapAnswer, "", ReasonMalformedJSON, "not a JSON object: %s", JSONDetail(err, body))
	}
	if _, ok := keys["cache_layout"]; ok {
		return WireCacheContract, nil
	}
	return WireV1, nil
}

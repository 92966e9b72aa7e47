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

package receiver

import (
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	wirecontract "github.com/pdtopo/pdtopo/pkg/receiver/wire/contract"
	wirev1 "github.com/pdtopo/pdtopo/pkg/receiver/wire/v1"
)

// newWire is the one place a wire (pkg/receiver/wire: v1 or contract) is
// chosen by its name: a plan snapshot's layout names it, an engine
// registration by its kind (engineWire), a bootstrap server by its
// answer's keys (kvwire.AnswerWire). Any name but the cache-contract
// wire's is v1, as plans made before the contract wire name none.
func newWire(name kvwire.Wire) wire.Wire {
	if name == kvwire.WireCacheContract {
		return wirecontract.New()
	}
	return wirev1.New()
}

// bootstrapAnswer is a parallel-info answer, decoded by the wire its keys
// name.
type bootstrapAnswer = wire.Answer

// decodeBootstrapAnswer tells the answer's wire and decodes it with that
// wire's decoder.
func decodeBootstrapAnswer(body []byte) (bootstrapAnswer, error) {
	name, err := kvwire.AnswerWire(body)
	if err != nil {
		return bootstrapAnswer{}, err
	}
	w := newWire(name)
	v, err := w.DecodeAnswer(body)
	return bootstrapAnswer{Wire: w, Value: v}, err
}

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

package livecontract

import (
	"strings"
	"testing"
)

// The agent's answer comes from the network: any bytes decode to an Agent
// whose contracts are each 1..256 KiB with a 64-digit SHA-256, or to a
// ReasonMalformed error; never a panic.
func FuzzDecodeAgent(f *testing.F) {
	f.Add([]byte(`{"planHash":"","ranks":[0,1],"engineContracts":[{"rank":1,"sha256":"` + strings.Repeat("0f", 32) + `","bytes":1726}]}`))
	f.Add([]byte(`{"engineContracts":[{"rank":-1,"sha256":"x","bytes":0}]}`))
	f.Add([]byte(`{"engineContracts":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := decodeAgent("http://x/v1/agent", body)
		if err != nil {
			if ReasonOf(err) != ReasonMalformed {
				t.Fatalf("reason %s: %v", ReasonOf(err), err)
			}
			return
		}
		for _, c := range a.Contracts {
			if c.Check() != nil {
				t.Fatalf("accepted %+v", c)
			}
		}
	})
}

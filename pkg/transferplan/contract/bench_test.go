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

import "testing"

// A 61-layer GQA model with 8 KV heads and 128-token pages, prefill TP 16
// (replica groups of 2) to decode TP 8, and the hybrid shape of Qwen3.5.
func benchContractPair(b *testing.B) Pair {
	b.Helper()
	c := testContract{prefix: 128, groups: []testGroup{mhaGroup(61, 8, 128)}}
	return contractPairOf(b, c, c, 16, 8)
}

func BenchmarkParseContract(b *testing.B) {
	raw := []byte(testContract{prefix: 128, groups: []testGroup{mhaGroup(61, 8, 128)}}.json(8))
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkContractPlanAllRanks(b *testing.B) {
	pair := benchContractPair(b)
	for b.Loop() {
		if _, err := Plan(pair); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEstimateContractPlanSize(b *testing.B) {
	pair := benchContractPair(b)
	for b.Loop() {
		if _, err := EstimatePlanSize(pair); err != nil {
			b.Fatal(err)
		}
	}
}

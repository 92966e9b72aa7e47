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

package planstore

import "testing"

func BenchmarkEncode1024DecodeRanks(b *testing.B) {
	set := p512D1024(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Encode("big", set); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoadRank1024DecodeRanks(b *testing.B) {
	objs := mustEncode(b, "big", p512D1024(b))
	for b.Loop() {
		if _, _, _, err := LoadRank(objs, 777); err != nil {
			b.Fatal(err)
		}
	}
}

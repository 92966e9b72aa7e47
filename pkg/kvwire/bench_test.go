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
	"testing"
)

func BenchmarkDecodeStatus(b *testing.B) {
	s := Status{Room: 1 << 40, State: Success, PrefillTPRank: 3, BootstrapToken: 128000, SpecCandidateIDs: []int32{1, 2, 3}}
	frames := s.Frames()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeStatus(frames); err != nil {
			b.Fatal(err)
		}
	}
}

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

package kvsim

import "math/rand/v2"

// ScrambledPages places n request pages in random, distinct slots of
// regions of slots pages on each side, independently, so that a fragment
// that ignores the page index, or uses the wrong side's, reads or writes the
// wrong page. Every field of a label must fit 16 bits: keep n × rows small.
func ScrambledPages(rng *rand.Rand, n, slots int) Pages {
	return Pages{Src: rng.Perm(slots)[:n], Dst: rng.Perm(slots)[:n], Slots: slots}
}

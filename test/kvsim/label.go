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

import "fmt"

// A Label names one byte of KV cache: which buffer, token, head (unit) and
// byte within the head it holds. Labels are packed into 16-bit fields so that
// a mismatch can be reported in those terms; 0 means "never written".
type Label uint64

const (
	fieldBits = 16
	fieldMax  = 1<<fieldBits - 1
	// garbageBit marks bytes of prefill pages that the request does not own:
	// reading one means a fragment used the wrong page.
	garbageBit = 1 << 63
)

// label packs the four coordinates. Callers keep every field within
// fieldMax (Buffer.Place checks the geometry).
func label(key int, token, head, byteInUnit int64) Label {
	return Label(uint64(key+1)<<(3*fieldBits) | uint64(token)<<(2*fieldBits) | uint64(head)<<fieldBits | uint64(byteInUnit))
}

// garbage labels byte x of a prefill page slot that holds no page of the request.
func garbage(key, rank, slot int, x int64) Label {
	return label(key, int64(slot), int64(rank), x&fieldMax) | garbageBit
}

func (l Label) String() string {
	if l == 0 {
		return "nothing"
	}
	key := int(l>>(3*fieldBits)&(fieldMax>>1)) - 1
	a, b, c := l>>(2*fieldBits)&fieldMax, l>>fieldBits&fieldMax, l&fieldMax
	if l&garbageBit != 0 {
		return fmt.Sprintf("a byte of buffer key %d of an unused prefill page (slot %d, rank %d)", key, a, b)
	}
	return fmt.Sprintf("token %d head %d byte %d of buffer key %d", a, b, c, key)
}

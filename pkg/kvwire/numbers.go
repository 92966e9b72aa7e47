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
	"encoding/binary"
	"math"
	"strconv"
)

// parseDecimal parses what Python's str(int) writes: an optional '-', then
// ASCII digits. A leading '+' is accepted too (int() does), but not the
// surrounding whitespace or '_' separators that int() would also take: no
// conforming sender writes them. The result must fit in an int64; overflow
// reports a well-formed number that does not.
func parseDecimal(b []byte) (v int64, ok, overflow bool) {
	neg := false
	digits := b
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return 0, false, false
	}
	// Accumulate as a negative number so that MinInt64 is representable.
	var acc int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false, false
		}
		d := int64(c - '0')
		if acc < (math.MinInt64+d)/10 {
			overflow = true
			continue // keep scanning: a later non-digit makes it NotAnInteger
		}
		acc = acc*10 - d
	}
	if overflow {
		return 0, false, true
	}
	if !neg {
		if acc == math.MinInt64 {
			return 0, false, true
		}
		acc = -acc
	}
	return acc, true, false
}

// appendDecimal writes v the way Python's str(int) does.
func appendDecimal(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

func appendU64s(dst []byte, vs []uint64) []byte {
	for _, v := range vs {
		dst = binary.LittleEndian.AppendUint64(dst, v)
	}
	return dst
}

func appendI64s(dst []byte, vs []int64) []byte {
	for _, v := range vs {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}

func appendI32s(dst []byte, vs []int32) []byte {
	for _, v := range vs {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	return dst
}

// appendBools writes numpy's np.bool_ tobytes(): one byte, 0 or 1, each.
func appendBools(dst []byte, vs []bool) []byte {
	for _, v := range vs {
		if v {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	}
	return dst
}

// frameReader reads the typed fields of one multipart message, turning every
// malformation into an *Error that names the frame.
type frameReader struct {
	kind   MessageKind
	frames [][]byte
}

func (r frameReader) int64(i int, field string) (int64, *Error) {
	v, ok, overflow := parseDecimal(r.frames[i])
	switch {
	case overflow:
		return 0, frameError(r.kind, i, field, ReasonOutOfRange, "%s does not fit in 64 bits", quote(r.frames[i]))
	case !ok:
		return 0, frameError(r.kind, i, field, ReasonNotAnInteger, "%s is not an ASCII decimal integer", quote(r.frames[i]))
	}
	return v, nil
}

// intIn reads an integer that must lie in [lo, hi].
func (r frameReader) intIn(i int, field string, lo, hi int64) (int64, *Error) {
	v, err := r.int64(i, field)
	if err != nil {
		return 0, err
	}
	if v < lo || v > hi {
		return 0, frameError(r.kind, i, field, ReasonOutOfRange, "%d is outside [%d, %d]", v, lo, hi)
	}
	return v, nil
}

func (r frameReader) port(i int, field string) (int, *Error) {
	v, err := r.intIn(i, field, 1, math.MaxUint16)
	return int(v), err
}

// text reads a printable-ASCII token (no spaces): addresses and session ids.
// The reference decodes these frames as ASCII and would raise on anything else.
func (r frameReader) text(i int, field string) (string, *Error) {
	b := r.frames[i]
	if len(b) == 0 {
		return "", frameError(r.kind, i, field, ReasonInvalidValue, "empty")
	}
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return "", frameError(r.kind, i, field, ReasonNotASCII, "%s holds a byte outside printable ASCII", quote(b))
		}
	}
	return string(b), nil
}

func (r frameReader) aligned(i int, field string, size int) *Error {
	if n := len(r.frames[i]); n%size != 0 {
		return frameError(r.kind, i, field, ReasonMisalignedArray, "%d bytes is not a whole number of %d-byte values", n, size)
	}
	return nil
}

// u64s reads raw little-endian uint64 values; an empty frame is an empty (nil) list.
func (r frameReader) u64s(i int, field string) ([]uint64, *Error) {
	if err := r.aligned(i, field, 8); err != nil {
		return nil, err
	}
	b := r.frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]uint64, len(b)/8)
	for k := range out {
		out[k] = binary.LittleEndian.Uint64(b[8*k:])
	}
	return out, nil
}

func (r frameReader) i64s(i int, field string) ([]int64, *Error) {
	if err := r.aligned(i, field, 8); err != nil {
		return nil, err
	}
	b := r.frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]int64, len(b)/8)
	for k := range out {
		out[k] = int64(binary.LittleEndian.Uint64(b[8*k:]))
	}
	return out, nil
}

func (r frameReader) i32s(i int, field string) ([]int32, *Error) {
	if err := r.aligned(i, field, 4); err != nil {
		return nil, err
	}
	b := r.frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]int32, len(b)/4)
	for k := range out {
		out[k] = int32(binary.LittleEndian.Uint32(b[4*k:]))
	}
	return out, nil
}

// bools reads np.bool_ bytes. numpy would take any byte, but only 0 and 1 are
// well-defined booleans, and only those are ever written.
func (r frameReader) bools(i int, field string) ([]bool, *Error) {
	b := r.frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]bool, len(b))
	for k, c := range b {
		if c > 1 {
			return nil, frameError(r.kind, i, field, ReasonInvalidValue, "byte %d is %d; a bool byte is 0 or 1", k, c)
		}
		out[k] = c == 1
	}
	return out, nil
}

// flag reads "0" or "1" (Python's str(int(bool))).
func (r frameReader) flag(i int, field string) (bool, *Error) {
	switch string(r.frames[i]) {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, frameError(r.kind, i, field, ReasonInvalidValue, "%s is not \"0\" or \"1\"", quote(r.frames[i]))
}

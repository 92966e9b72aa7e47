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

// ParseDecimal parses what Python's str(int) writes: an optional '-', then
// ASCII digits. A leading '+' is accepted too (int() does), but not the
// surrounding whitespace or '_' separators that int() would also take: no
// conforming sender writes them. The result must fit in an int64; overflow
// reports a well-formed number that does not.
func ParseDecimal(b []byte) (v int64, ok, overflow bool) {
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

// AppendDecimal writes v the way Python's str(int) does.
func AppendDecimal(dst []byte, v int64) []byte { return strconv.AppendInt(dst, v, 10) }

// AppendU64s writes raw little-endian uint64 values (pointers).
func AppendU64s(dst []byte, vs []uint64) []byte {
	for _, v := range vs {
		dst = binary.LittleEndian.AppendUint64(dst, v)
	}
	return dst
}

// AppendI64s writes raw little-endian int64 values (indices).
func AppendI64s(dst []byte, vs []int64) []byte {
	for _, v := range vs {
		dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
	}
	return dst
}

// AppendI32s writes raw little-endian int32 values (candidate ids).
func AppendI32s(dst []byte, vs []int32) []byte {
	for _, v := range vs {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
	}
	return dst
}

// AppendBools writes numpy's np.bool_ tobytes(): one byte, 0 or 1, each.
func AppendBools(dst []byte, vs []bool) []byte {
	for _, v := range vs {
		if v {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	}
	return dst
}

// FrameReader reads the typed fields of one multipart message of either
// wire, turning every malformation into an *Error that names the frame.
type FrameReader struct {
	Kind   MessageKind
	Frames [][]byte
}

// Int64 reads an ASCII decimal integer, as Python's int() of str(int).
func (r FrameReader) Int64(i int, field string) (int64, *Error) {
	v, ok, overflow := ParseDecimal(r.Frames[i])
	switch {
	case overflow:
		return 0, FrameError(r.Kind, i, field, ReasonOutOfRange, "%s does not fit in 64 bits", Quote(r.Frames[i]))
	case !ok:
		return 0, FrameError(r.Kind, i, field, ReasonNotAnInteger, "%s is not an ASCII decimal integer", Quote(r.Frames[i]))
	}
	return v, nil
}

// IntIn reads an integer that must lie in [lo, hi].
func (r FrameReader) IntIn(i int, field string, lo, hi int64) (int64, *Error) {
	v, err := r.Int64(i, field)
	if err != nil {
		return 0, err
	}
	if v < lo || v > hi {
		return 0, FrameError(r.Kind, i, field, ReasonOutOfRange, "%d is outside [%d, %d]", v, lo, hi)
	}
	return v, nil
}

// Port reads a TCP port in 1..65535.
func (r FrameReader) Port(i int, field string) (int, *Error) {
	v, err := r.IntIn(i, field, 1, math.MaxUint16)
	return int(v), err
}

// Text reads a printable-ASCII token (no spaces): addresses and session ids.
// The reference decodes these frames as ASCII and would raise on anything else.
func (r FrameReader) Text(i int, field string) (string, *Error) {
	b := r.Frames[i]
	if len(b) == 0 {
		return "", FrameError(r.Kind, i, field, ReasonInvalidValue, "empty")
	}
	for _, c := range b {
		if c <= ' ' || c > '~' {
			return "", FrameError(r.Kind, i, field, ReasonNotASCII, "%s holds a byte outside printable ASCII", Quote(b))
		}
	}
	return string(b), nil
}

// Aligned requires frame i to hold whole size-byte values.
func (r FrameReader) Aligned(i int, field string, size int) *Error {
	if n := len(r.Frames[i]); n%size != 0 {
		return FrameError(r.Kind, i, field, ReasonMisalignedArray, "%d bytes is not a whole number of %d-byte values", n, size)
	}
	return nil
}

// u64s reads raw little-endian uint64 values; an empty frame is an empty (nil) list.
func (r FrameReader) U64s(i int, field string) ([]uint64, *Error) {
	if err := r.Aligned(i, field, 8); err != nil {
		return nil, err
	}
	b := r.Frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]uint64, len(b)/8)
	for k := range out {
		out[k] = binary.LittleEndian.Uint64(b[8*k:])
	}
	return out, nil
}

// I64s reads raw little-endian int64 values; an empty frame is nil.
func (r FrameReader) I64s(i int, field string) ([]int64, *Error) {
	if err := r.Aligned(i, field, 8); err != nil {
		return nil, err
	}
	b := r.Frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]int64, len(b)/8)
	for k := range out {
		out[k] = int64(binary.LittleEndian.Uint64(b[8*k:]))
	}
	return out, nil
}

// I32s reads raw little-endian int32 values; an empty frame is nil.
func (r FrameReader) I32s(i int, field string) ([]int32, *Error) {
	if err := r.Aligned(i, field, 4); err != nil {
		return nil, err
	}
	b := r.Frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]int32, len(b)/4)
	for k := range out {
		out[k] = int32(binary.LittleEndian.Uint32(b[4*k:]))
	}
	return out, nil
}

// Bools reads np.bool_ bytes. numpy would take any byte, but only 0 and 1 are
// well-defined booleans, and only those are ever written.
func (r FrameReader) Bools(i int, field string) ([]bool, *Error) {
	b := r.Frames[i]
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]bool, len(b))
	for k, c := range b {
		if c > 1 {
			return nil, FrameError(r.Kind, i, field, ReasonInvalidValue, "byte %d is %d; a bool byte is 0 or 1", k, c)
		}
		out[k] = c == 1
	}
	return out, nil
}

// Flag reads "0" or "1" (Python's str(int(bool))).
func (r FrameReader) Flag(i int, field string) (bool, *Error) {
	switch string(r.Frames[i]) {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, FrameError(r.Kind, i, field, ReasonInvalidValue, "%s is not \"0\" or \"1\"", Quote(r.Frames[i]))
}

// CanonicalUint reads frame i the way the engine's _bounded_ascii_uint does:
// 1 to len(str(hi)) ASCII digits, no sign, no leading zero, within [lo, hi].
func (r FrameReader) CanonicalUint(i int, field string, lo, hi int64) (int64, *Error) {
	b := r.Frames[i]
	maxDigits := len(strconv.FormatInt(hi, 10))
	if len(b) == 0 || len(b) > maxDigits {
		return 0, FrameError(r.Kind, i, field, ReasonNotCanonical, "%s: want 1 to %d ASCII digits", Quote(b), maxDigits)
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, FrameError(r.Kind, i, field, ReasonNotCanonical, "%s holds a byte other than an ASCII digit", Quote(b))
		}
	}
	if len(b) > 1 && b[0] == '0' {
		return 0, FrameError(r.Kind, i, field, ReasonNotCanonical, "%s has a leading zero", Quote(b))
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || v < uint64(lo) || v > uint64(hi) {
		return 0, FrameError(r.Kind, i, field, ReasonOutOfRange, "%s is outside [%d, %d]", b, lo, hi)
	}
	return int64(v), nil
}

// BoundedText reads a printable-ASCII token of at most limit bytes.
func (r FrameReader) BoundedText(i int, field string, limit int) (string, *Error) {
	if n := len(r.Frames[i]); n > limit {
		return "", FrameError(r.Kind, i, field, ReasonOutOfRange, "%d bytes; the engine takes at most %d", n, limit)
	}
	return r.Text(i, field)
}

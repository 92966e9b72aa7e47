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

package pyjson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// Python's json.loads takes bytes in UTF-8 (with or without a byte order
// mark), UTF-16 or UTF-32, guessing which from the first bytes, and decodes
// them with the "surrogatepass" error handler, which lets encoded lone
// surrogates through. decodeText does the same and returns code points.

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
	bomUTF32LE = []byte{0xFF, 0xFE, 0, 0}
	bomUTF32BE = []byte{0, 0, 0xFE, 0xFF}
)

// detectEncoding is json.detect_encoding.
func detectEncoding(b []byte) string {
	switch {
	case bytes.HasPrefix(b, bomUTF32BE) || bytes.HasPrefix(b, bomUTF32LE):
		return "utf-32"
	case bytes.HasPrefix(b, bomUTF16BE) || bytes.HasPrefix(b, bomUTF16LE):
		return "utf-16"
	case bytes.HasPrefix(b, bomUTF8):
		return "utf-8-sig"
	}
	if len(b) >= 4 {
		if b[0] == 0 {
			if b[1] != 0 {
				return "utf-16-be"
			}
			return "utf-32-be"
		}
		if b[1] == 0 {
			if b[2] != 0 || b[3] != 0 {
				return "utf-16-le"
			}
			return "utf-32-le"
		}
	} else if len(b) == 2 {
		if b[0] == 0 {
			return "utf-16-be"
		}
		if b[1] == 0 {
			return "utf-16-le"
		}
	}
	return "utf-8"
}

var errUnicode = errors.New("UnicodeDecodeError")

// decodeText decodes the bytes as json.loads does before parsing.
func decodeText(b []byte) ([]rune, error) {
	switch enc := detectEncoding(b); enc {
	case "utf-8":
		return decodeUTF8Surrogatepass(b)
	case "utf-8-sig":
		return decodeUTF8Surrogatepass(b[len(bomUTF8):])
	case "utf-16":
		if bytes.HasPrefix(b, bomUTF16LE) {
			return decodeUTF16(b[2:], binary.LittleEndian)
		}
		return decodeUTF16(b[2:], binary.BigEndian)
	case "utf-16-le":
		return decodeUTF16(b, binary.LittleEndian)
	case "utf-16-be":
		return decodeUTF16(b, binary.BigEndian)
	case "utf-32":
		if bytes.HasPrefix(b, bomUTF32LE) {
			return decodeUTF32(b[4:], binary.LittleEndian)
		}
		return decodeUTF32(b[4:], binary.BigEndian)
	case "utf-32-le":
		return decodeUTF32(b, binary.LittleEndian)
	default:
		return decodeUTF32(b, binary.BigEndian)
	}
}

// decodeUTF8Surrogatepass is Python's strict UTF-8 decoder, except that the
// three-byte forms of U+D800..U+DFFF are accepted.
func decodeUTF8Surrogatepass(b []byte) ([]rune, error) {
	out := make([]rune, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		var n int
		var r rune
		var lo, hi byte = 0x80, 0xBF
		switch {
		case c < 0x80:
			out = append(out, rune(c))
			i++
			continue
		case c >= 0xC2 && c <= 0xDF:
			n, r = 1, rune(c&0x1F)
		case c >= 0xE0 && c <= 0xEF:
			n, r = 2, rune(c&0x0F)
			if c == 0xE0 {
				lo = 0xA0
			}
		case c >= 0xF0 && c <= 0xF4:
			n, r = 3, rune(c&0x07)
			switch c {
			case 0xF0:
				lo = 0x90
			case 0xF4:
				hi = 0x8F
			}
		default:
			return nil, fmt.Errorf("%w: byte 0x%02x at %d", errUnicode, c, i)
		}
		if i+n >= len(b) {
			return nil, fmt.Errorf("%w: truncated sequence at %d", errUnicode, i)
		}
		for k := 1; k <= n; k++ {
			cc := b[i+k]
			if k == 1 && (cc < lo || cc > hi) || k > 1 && (cc < 0x80 || cc > 0xBF) {
				return nil, fmt.Errorf("%w: invalid continuation at %d", errUnicode, i+k)
			}
			r = r<<6 | rune(cc&0x3F)
		}
		out = append(out, r)
		i += n + 1
	}
	return out, nil
}

func decodeUTF16(b []byte, order binary.ByteOrder) ([]rune, error) {
	if len(b)%2 != 0 {
		return nil, fmt.Errorf("%w: truncated UTF-16 data", errUnicode)
	}
	out := make([]rune, 0, len(b)/2)
	for i := 0; i < len(b); i += 2 {
		u := rune(order.Uint16(b[i:]))
		if u >= 0xD800 && u <= 0xDBFF && i+3 < len(b) {
			if v := rune(order.Uint16(b[i+2:])); v >= 0xDC00 && v <= 0xDFFF {
				out = append(out, 0x10000+(u-0xD800)<<10+(v-0xDC00))
				i += 2
				continue
			}
		}
		out = append(out, u) // a lone surrogate passes
	}
	return out, nil
}

func decodeUTF32(b []byte, order binary.ByteOrder) ([]rune, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: truncated UTF-32 data", errUnicode)
	}
	out := make([]rune, 0, len(b)/4)
	for i := 0; i < len(b); i += 4 {
		u := order.Uint32(b[i:])
		if u > 0x10FFFF {
			return nil, fmt.Errorf("%w: code point 0x%x out of range", errUnicode, u)
		}
		out = append(out, rune(u))
	}
	return out, nil
}

// wtf8Encode appends r in UTF-8, encoding a surrogate like any other code
// point below U+10000 (which UTF-8 proper forbids).
func wtf8Encode(dst []byte, r rune) []byte {
	switch {
	case r < 0x80:
		return append(dst, byte(r))
	case r < 0x800:
		return append(dst, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
	case r < 0x10000:
		return append(dst, 0xE0|byte(r>>12), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
	}
	return append(dst, 0xF0|byte(r>>18), 0x80|byte(r>>12&0x3F), 0x80|byte(r>>6&0x3F), 0x80|byte(r&0x3F))
}

// wtf8Runes decodes what wtf8Encode wrote.
func wtf8Runes(s string) []rune {
	out := make([]rune, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < 0x80:
			out = append(out, rune(c))
			i++
		case c < 0xE0:
			out = append(out, rune(c&0x1F)<<6|rune(s[i+1]&0x3F))
			i += 2
		case c < 0xF0:
			out = append(out, rune(c&0x0F)<<12|rune(s[i+1]&0x3F)<<6|rune(s[i+2]&0x3F))
			i += 3
		default:
			out = append(out, rune(c&0x07)<<18|rune(s[i+1]&0x3F)<<12|rune(s[i+2]&0x3F)<<6|rune(s[i+3]&0x3F))
			i += 4
		}
	}
	return out
}

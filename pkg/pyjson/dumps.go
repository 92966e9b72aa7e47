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
	"strconv"
	"unicode/utf8"
)

// Object writes a flat JSON object the way Python's json.dumps does with
// its default separators (", " and ": ") and ensure_ascii, which is what the
// reference's aiohttp json_response and requests.put(json=...) send. Parsers
// do not care, but byte-identical bodies make captures comparable.
type Object struct {
	buf []byte
	n   int
}

// NewObject starts an object with room for capacity bytes.
func NewObject(capacity int) *Object {
	return &Object{buf: append(make([]byte, 0, capacity), '{')}
}

func (o *Object) key(k string) {
	if o.n > 0 {
		o.buf = append(o.buf, ", "...)
	}
	o.n++
	o.buf = AppendString(o.buf, k)
	o.buf = append(o.buf, ": "...)
}

// Str writes the key k with the string v.
func (o *Object) Str(k, v string) { o.key(k); o.buf = AppendString(o.buf, v) }

// Int writes the key k with the integer v.
func (o *Object) Int(k string, v int64) { o.key(k); o.buf = strconv.AppendInt(o.buf, v, 10) }

// IntOrNull writes null for 0: a size the reference has not learned yet.
func (o *Object) IntOrNull(k string, v int64) {
	if v == 0 {
		o.key(k)
		o.buf = append(o.buf, "null"...)
		return
	}
	o.Int(k, v)
}

// StrOrNull writes null for nil: a value the reference has not learned yet.
func (o *Object) StrOrNull(k string, v []byte) {
	o.key(k)
	if v == nil {
		o.buf = append(o.buf, "null"...)
		return
	}
	o.buf = AppendString(o.buf, string(v))
}

// Bool writes the key k with true or false.
func (o *Object) Bool(k string, v bool) {
	o.key(k)
	o.buf = strconv.AppendBool(o.buf, v)
}

// Ints writes a list; nil is written as [] because the reference reads
// these lists with dict.get(key, []) and iterates them, which null would break.
func (o *Object) Ints(k string, vs []int64) {
	o.key(k)
	o.buf = append(o.buf, '[')
	for i, v := range vs {
		if i > 0 {
			o.buf = append(o.buf, ", "...)
		}
		o.buf = strconv.AppendInt(o.buf, v, 10)
	}
	o.buf = append(o.buf, ']')
}

// Bytes closes the object and returns it.
func (o *Object) Bytes() []byte { return append(o.buf, '}') }

// AppendString quotes s as json.dumps(ensure_ascii=True) does: short
// escapes for \" \\ \n \r \t \b \f, \u00XX for other control bytes, \uXXXX
// (surrogate pairs beyond the BMP) for everything outside ASCII.
func AppendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\r':
			dst = append(dst, `\r`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r == '\b':
			dst = append(dst, `\b`...)
		case r == '\f':
			dst = append(dst, `\f`...)
		case r >= 0x20 && r < 0x7f:
			dst = append(dst, byte(r))
		default:
			if r == utf8.RuneError {
				r = 0xfffd
			}
			units := []rune{r}
			if r > 0xffff {
				r -= 0x10000
				units = []rune{0xd800 + r>>10, 0xdc00 + r&0x3ff}
			}
			for _, u := range units {
				dst = append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
			}
		}
	}
	return append(dst, '"')
}

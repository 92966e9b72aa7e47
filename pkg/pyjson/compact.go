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
	"math"
	"strconv"
	"strings"
)

// CompactWriter writes values as json.dumps(v, separators=(",", ":")) does
// with ensure_ascii: no spaces, non-ASCII escaped as \uXXXX (lowercase
// hex, surrogate pairs beyond the BMP), floats as Python's repr. The engine
// re-encodes its contracts so, and Repr prints values in the same form.
type CompactWriter struct{ b []byte }

// Bytes is what has been written.
func (w *CompactWriter) Bytes() []byte { return w.b }

// Raw writes s as it is (keys and punctuation the caller spells).
func (w *CompactWriter) Raw(s string) { w.b = append(w.b, s...) }

// Sep writes the "," before every element but the first (i is its index).
func (w *CompactWriter) Sep(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

// Object writes {"k1":v1,...} from alternating keys (string) and values
// (Value).
func (w *CompactWriter) Object(kv ...any) {
	w.b = append(w.b, '{')
	for i := 0; i < len(kv); i += 2 {
		w.Sep(i)
		w.Str(kv[i].(string))
		w.b = append(w.b, ':')
		w.Value(kv[i+1].(Value))
	}
	w.b = append(w.b, '}')
}

// Value writes v as json.dumps does.
func (w *CompactWriter) Value(v Value) {
	switch v.kind {
	case None:
		w.Raw("null")
	case Bool:
		w.Raw(strconv.FormatBool(v.b))
	case Int:
		w.b = v.i.Append(w.b, 10)
	case Float:
		w.Raw(FloatRepr(v.f))
	case Str:
		w.Str(v.s)
	case List:
		w.b = append(w.b, '[')
		for i, e := range v.items {
			w.Sep(i)
			w.Value(e)
		}
		w.b = append(w.b, ']')
	case Dict:
		w.b = append(w.b, '{')
		for i, k := range v.keys {
			w.Sep(i)
			w.Str(k)
			w.b = append(w.b, ':')
			w.Value(v.items[i])
		}
		w.b = append(w.b, '}')
	}
}

// Str writes a WTF-8 string as json.dumps does with ensure_ascii.
func (w *CompactWriter) Str(s string) {
	const hex = "0123456789abcdef"
	u4 := func(r rune) {
		w.b = append(w.b, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
	}
	w.b = append(w.b, '"')
	for _, r := range wtf8Runes(s) {
		switch {
		case r == '"':
			w.Raw(`\"`)
		case r == '\\':
			w.Raw(`\\`)
		case r == '\n':
			w.Raw(`\n`)
		case r == '\r':
			w.Raw(`\r`)
		case r == '\t':
			w.Raw(`\t`)
		case r == '\b':
			w.Raw(`\b`)
		case r == '\f':
			w.Raw(`\f`)
		case r >= ' ' && r <= '~':
			w.b = append(w.b, byte(r))
		case r < 0x10000:
			u4(r)
		default:
			r -= 0x10000
			u4(0xD800 | r>>10&0x3FF)
			u4(0xDC00 | r&0x3FF)
		}
	}
	w.b = append(w.b, '"')
}

// FloatRepr is Python's repr(float) as json.dumps writes it: NaN and
// ±Infinity, else the shortest digits that round-trip, in positional form
// when the decimal exponent is in (-4, 16] (with ".0" when integral) and
// in d.ddde±XX form otherwise.
func FloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.dddde±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, expPart, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expPart)
	decpt := exp + 1 // digits d1 d2 ... with the point after decpt digits
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	m := digits[:1]
	if len(digits) > 1 {
		m += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es, exp = "-", -exp
	}
	x := strconv.Itoa(exp)
	if len(x) < 2 {
		x = "0" + x
	}
	return sign + m + "e" + es + x
}

// Repr writes a value for messages, in the canonical JSON form.
func (v Value) Repr() string {
	w := &CompactWriter{}
	w.Value(v)
	return string(w.b)
}

// ReprList is Repr of the list of vs.
func ReprList(vs []Value) string { return Value{kind: List, items: vs}.Repr() }

// TypeName names a value's JSON type for messages.
func (v Value) TypeName() string {
	return [...]string{"null", "a boolean", "an integer", "a float", "a string", "a list", "an object"}[v.kind]
}

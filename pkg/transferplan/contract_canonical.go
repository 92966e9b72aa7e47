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

package transferplan

import (
	"math"
	"strconv"
	"strings"
)

// The engine re-encodes a contract with json.dumps(dataclasses.asdict(c),
// separators=(",", ":")): dataclass fields in declaration order, tuples as
// lists, non-ASCII escaped as \uXXXX (lowercase hex), floats as Python's
// repr. A prefill's bootstrap server serves that form and a decode
// registers it, so pdtopo hashes and compares contracts in it.

type canonicalWriter struct{ b []byte }

func (c *CacheContract) encodeCanonical() []byte {
	w := &canonicalWriter{}
	w.raw(`{"plan":{"prefix_granularity":`)
	w.value(c.prefixGranularity)
	w.raw(`,"lcm_block_bytes":`)
	w.value(c.lcmBlockBytes)
	w.raw(`,"num_lcm_blocks":`)
	w.value(c.numLCMBlocks)
	w.raw(`,"groups":[`)
	for i, g := range c.groups {
		w.sep(i)
		w.object("group_id", g.groupID, "cache_blocks_per_lcm_block", g.cacheBlocksPerLCMBlock, "page_count", g.pageCount)
	}
	w.raw(`],"planes":[`)
	for i, p := range c.planes {
		w.sep(i)
		w.object("plane_id", p.planeID, "bytes_per_lcm_block", p.bytesPerLCMBlock, "arena_offset_bytes", p.arenaOffsetBytes)
	}
	w.raw(`],"fields":[`)
	for i, f := range c.fields {
		w.sep(i)
		w.object("group_id", f.groupID, "field_id", f.fieldID, "plane_id", f.planeID, "shape", pyValue{kind: pyList, items: f.shape},
			"dtype", pyString(f.dtype), "field_offset_bytes", f.fieldOffsetBytes, "page_stride_bytes", f.pageStrideBytes)
	}
	w.raw(`]},"group_specs":[`)
	for i, s := range c.groupSpecs {
		w.sep(i)
		w.object("group_id", s.groupID, "retention", s.retention, "rows_per_page", s.rowsPerPage, "entry_stride_tokens", s.entryStrideTokens,
			"sliding_window_tokens", s.slidingWindowTokens, "family", s.family, "transfer_policy", s.transferPolicy,
			"checkpoint_granularity", s.checkpointGranularity)
	}
	w.raw(`],"transfer_schema":{"fields":[`)
	for i, tf := range c.transferFields {
		w.sep(i)
		w.raw(`{"field_id":`)
		w.value(tf.fieldID)
		w.raw(`,"partition":`)
		p := tf.partition
		w.object("axis", p.axisValue, "global_extent", p.globalExtent, "global_parts", pyValue{kind: pyList, items: p.globalParts})
		w.raw(`}`)
	}
	w.raw(`]}}`)
	return w.b
}

func (w *canonicalWriter) raw(s string) { w.b = append(w.b, s...) }

func (w *canonicalWriter) sep(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

// object writes {"k1":v1,...} from alternating keys and values.
func (w *canonicalWriter) object(kv ...any) {
	w.b = append(w.b, '{')
	for i := 0; i < len(kv); i += 2 {
		w.sep(i)
		w.str(kv[i].(string))
		w.b = append(w.b, ':')
		w.value(kv[i+1].(pyValue))
	}
	w.b = append(w.b, '}')
}

func (w *canonicalWriter) value(v pyValue) {
	switch v.kind {
	case pyNone:
		w.raw("null")
	case pyBool:
		w.raw(strconv.FormatBool(v.b))
	case pyInt:
		w.b = v.i.Append(w.b, 10)
	case pyFloat:
		w.raw(pyFloatRepr(v.f))
	case pyStr:
		w.str(v.s)
	case pyList:
		w.b = append(w.b, '[')
		for i, e := range v.items {
			w.sep(i)
			w.value(e)
		}
		w.b = append(w.b, ']')
	case pyDict:
		w.b = append(w.b, '{')
		for i, k := range v.keys {
			w.sep(i)
			w.str(k)
			w.b = append(w.b, ':')
			w.value(v.items[i])
		}
		w.b = append(w.b, '}')
	}
}

// str writes a WTF-8 string as json.dumps does with ensure_ascii.
func (w *canonicalWriter) str(s string) {
	const hex = "0123456789abcdef"
	u4 := func(r rune) {
		w.b = append(w.b, '\\', 'u', hex[r>>12&0xF], hex[r>>8&0xF], hex[r>>4&0xF], hex[r&0xF])
	}
	w.b = append(w.b, '"')
	for _, r := range wtf8Runes(s) {
		switch {
		case r == '"':
			w.raw(`\"`)
		case r == '\\':
			w.raw(`\\`)
		case r == '\n':
			w.raw(`\n`)
		case r == '\r':
			w.raw(`\r`)
		case r == '\t':
			w.raw(`\t`)
		case r == '\b':
			w.raw(`\b`)
		case r == '\f':
			w.raw(`\f`)
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

// pyFloatRepr is Python's repr(float) as json.dumps writes it: NaN and
// ±Infinity, else the shortest digits that round-trip, in positional form
// when the decimal exponent is in (-4, 16] (with ".0" when integral) and
// in d.ddde±XX form otherwise.
func pyFloatRepr(f float64) string {
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

// repr writes a value for messages, in the canonical JSON form.
func (v pyValue) repr() string {
	w := &canonicalWriter{}
	w.value(v)
	return string(w.b)
}

func reprList(vs []pyValue) string { return pyValue{kind: pyList, items: vs}.repr() }

// typeName names a value's JSON type for messages.
func (v pyValue) typeName() string {
	return [...]string{"null", "a boolean", "an integer", "a float", "a string", "a list", "an object"}[v.kind]
}

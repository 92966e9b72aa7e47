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
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Limits of Python's json.loads that decide acceptance.
const (
	// maxIntDigits is sys.int_info.default_max_str_digits: json.loads
	// refuses an integer literal with more digits.
	maxIntDigits = 4300
	// maxNesting is the deepest nesting of arrays and objects that the
	// engine decodes: json.loads recurses per level under Python's
	// recursion limit (1000 in CPython 3.11), which also counts the frames
	// of whoever called it, so the exact depth depends on the caller. From a
	// call as deep as the prefill's registration handler it is 988 (the
	// vector generator measures it: testdata/contract/README.md); a real
	// contract nests 5 levels.
	maxNesting = 988
)

// syntaxError is a json.loads failure: the position (in code points) and why.
type syntaxError struct {
	pos int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at character %d", e.msg, e.pos) }

// Parse is json.loads(b): the bytes decoded as Python decodes them (UTF-8,
// UTF-16 or UTF-32 guessed from the first bytes, lone surrogates let
// through), then parsed with Python's grammar. Its errors read as Python's
// (a UnicodeDecodeError, or a message "at character N").
func Parse(b []byte) (Value, error) {
	text, err := decodeText(b)
	if err != nil {
		return Value{}, err
	}
	return parseText(text)
}

// parseText is json.loads(text) for decoded text: Python's grammar, which
// also takes NaN, Infinity and -Infinity, keeps the last of duplicate keys
// (at the first one's position), and reads integers of any size.
func parseText(text []rune) (Value, error) {
	p := &parser{s: text}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return Value{}, p.fail("Extra data")
	}
	return v, nil
}

type parser struct {
	s   []rune
	pos int
}

func (p *parser) fail(msg string) error { return &syntaxError{pos: p.pos, msg: msg} }

func (p *parser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) literal(word string) bool {
	if p.pos+len(word) > len(p.s) {
		return false
	}
	for i, c := range word {
		if p.s[p.pos+i] != c {
			return false
		}
	}
	p.pos += len(word)
	return true
}

func (p *parser) value(depth int) (Value, error) {
	if p.pos >= len(p.s) {
		return Value{}, p.fail("Expecting value")
	}
	switch c := p.s[p.pos]; {
	case c == '"':
		s, err := p.str()
		return String(s), err
	case c == '{' || c == '[':
		if depth+1 > maxNesting {
			return Value{}, p.fail("RecursionError: nesting deeper than " + strconv.Itoa(maxNesting))
		}
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case p.literal("null"):
		return Value{kind: None}, nil
	case p.literal("true"):
		return Value{kind: Bool, b: true}, nil
	case p.literal("false"):
		return Value{kind: Bool}, nil
	case p.literal("NaN"):
		return Value{kind: Float, f: math.NaN()}, nil
	case p.literal("Infinity"):
		return Value{kind: Float, f: math.Inf(1)}, nil
	case p.literal("-Infinity"):
		return Value{kind: Float, f: math.Inf(-1)}, nil
	}
	return p.number()
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?: an int when
// neither fraction nor exponent is present, else a float. A fraction or an
// exponent without digits is not consumed (the rest is then extra data).
func (p *parser) number() (Value, error) {
	start := p.pos
	i := p.pos
	if i < len(p.s) && p.s[i] == '-' {
		i++
	}
	switch {
	case i < len(p.s) && p.s[i] == '0':
		i++
	case i < len(p.s) && p.s[i] >= '1' && p.s[i] <= '9':
		for i < len(p.s) && isDigit(p.s[i]) {
			i++
		}
	default:
		return Value{}, p.fail("Expecting value")
	}
	isFloat := false
	if i+1 < len(p.s) && p.s[i] == '.' && isDigit(p.s[i+1]) {
		i += 2
		for i < len(p.s) && isDigit(p.s[i]) {
			i++
		}
		isFloat = true
	}
	if i < len(p.s) && (p.s[i] == 'e' || p.s[i] == 'E') {
		j := i + 1
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if j < len(p.s) && isDigit(p.s[j]) {
			for j < len(p.s) && isDigit(p.s[j]) {
				j++
			}
			i, isFloat = j, true
		}
	}
	lit := string(p.s[start:i])
	p.pos = i
	if isFloat {
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil && !isRangeErr(err) { // out of range gives ±Inf or 0, as Python does
			return Value{}, p.fail("Expecting value")
		}
		return Value{kind: Float, f: f}, nil
	}
	digits := len(lit)
	if lit[0] == '-' {
		digits--
	}
	if digits > maxIntDigits {
		return Value{}, &syntaxError{pos: start, msg: fmt.Sprintf("ValueError: integer of %d digits exceeds the limit (%d digits)", digits, maxIntDigits)}
	}
	n, _ := new(big.Int).SetString(lit, 10)
	return Value{kind: Int, i: n}, nil
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// str reads a string (p.pos at the opening quote) in strict mode: control
// characters must be escaped, escapes are the eight JSON ones and \uXXXX,
// a high surrogate escape followed by a low one is one code point and a
// lone surrogate stays as it is.
func (p *parser) str() (string, error) {
	p.pos++
	var out []byte
	for {
		if p.pos >= len(p.s) {
			return "", p.fail("Unterminated string")
		}
		c := p.s[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(out), nil
		case c < 0x20:
			return "", p.fail("Invalid control character")
		case c != '\\':
			out = wtf8Encode(out, c)
			p.pos++
			continue
		}
		p.pos++
		if p.pos >= len(p.s) {
			return "", p.fail("Unterminated string")
		}
		esc := p.s[p.pos]
		p.pos++
		switch esc {
		case '"', '\\', '/':
			out = append(out, byte(esc))
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			if r >= 0xD800 && r <= 0xDBFF && p.pos+1 < len(p.s) && p.s[p.pos] == '\\' && p.s[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				r2, err := p.hex4()
				if err != nil {
					return "", err
				}
				if r2 >= 0xDC00 && r2 <= 0xDFFF {
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
				} else {
					p.pos = save // the second escape is read on its own
				}
			}
			out = wtf8Encode(out, r)
		default:
			p.pos--
			return "", p.fail("Invalid \\escape")
		}
	}
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.s) {
		return 0, p.fail("Invalid \\uXXXX escape")
	}
	var r rune
	for _, c := range p.s[p.pos : p.pos+4] {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail("Invalid \\uXXXX escape")
		}
		r = r<<4 | d
	}
	p.pos += 4
	return r, nil
}

func (p *parser) object(depth int) (Value, error) {
	p.pos++
	v := Value{kind: Dict}
	var index map[string]int
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		if p.pos >= len(p.s) || p.s[p.pos] != '"' {
			return Value{}, p.fail("Expecting property name enclosed in double quotes")
		}
		key, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.s) || p.s[p.pos] != ':' {
			return Value{}, p.fail("Expecting ':' delimiter")
		}
		p.pos++
		p.skipSpace()
		val, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		if index == nil {
			index = map[string]int{}
		}
		if at, dup := index[key]; dup {
			v.items[at] = val // the last value wins, at the first key's place
		} else {
			index[key] = len(v.keys)
			v.keys = append(v.keys, key)
			v.items = append(v.items, val)
		}
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == '}' {
			p.pos++
			return v, nil
		}
		if p.pos >= len(p.s) || p.s[p.pos] != ',' {
			return Value{}, p.fail("Expecting ',' delimiter")
		}
		p.pos++
		p.skipSpace()
	}
}

func (p *parser) array(depth int) (Value, error) {
	p.pos++
	v := Value{kind: List}
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		val, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		v.items = append(v.items, val)
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == ']' {
			p.pos++
			return v, nil
		}
		if p.pos >= len(p.s) || p.s[p.pos] != ',' {
			return Value{}, p.fail("Expecting ',' delimiter")
		}
		p.pos++
		p.skipSpace()
	}
}

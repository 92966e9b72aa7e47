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

package contract

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// manifestScan reads a manifest's JSON in one pass without building more
// than it is asked to: per group, the id, the number of blocks and the
// smallest and largest block id (which is all a bounds check needs), and the
// ids themselves only when collect is set. A 2 MiB manifest is read where it
// lies; nothing of it is copied or re-encoded.
type manifestScan struct {
	raw []byte
	pos int
	// keep is how many groups to record (-1: all); the rest are counted.
	keep    int
	collect bool

	prefixLen, promptLen int64
	groups               []scannedGroup
	groupCount           int
	blocks               int
	scratch              []byte
}

type scannedGroup struct {
	id           string
	count        int
	min, max     int64
	minAt, maxAt int
	ids          []int64
}

func (s *manifestScan) fail(field string, reason kvwire.Reason, format string, args ...any) error {
	return kvwire.FieldError(kvwire.KindManifest, field, reason, "at byte %d: %s", s.pos, fmt.Sprintf(format, args...))
}

func (s *manifestScan) malformed(field, want string) error {
	if s.pos >= len(s.raw) {
		return s.fail(field, kvwire.ReasonMalformedJSON, "the JSON ends where %s is due", want)
	}
	return s.fail(field, kvwire.ReasonMalformedJSON, "%q where %s is due", s.raw[s.pos], want)
}

func (s *manifestScan) ws() {
	for s.pos < len(s.raw) {
		switch s.raw[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// next skips white space and reports the byte there (0 at the end).
func (s *manifestScan) next() byte {
	s.ws()
	if s.pos < len(s.raw) {
		return s.raw[s.pos]
	}
	return 0
}

func (s *manifestScan) literal(word string) bool {
	if len(s.raw)-s.pos >= len(word) && string(s.raw[s.pos:s.pos+len(word)]) == word {
		s.pos += len(word)
		return true
	}
	return false
}

func (s *manifestScan) run() error {
	if len(s.raw) == 0 || len(s.raw) > MaxManifestBytes {
		return kvwire.FieldError(kvwire.KindManifest, "", kvwire.ReasonPayloadSize, "%d bytes; the engine takes 1..%d", len(s.raw), MaxManifestBytes)
	}
	if s.next() != '{' {
		return s.malformed("", "the manifest's JSON object")
	}
	var seen [3]bool
	err := s.object("", func(key []byte) error {
		var slot int
		switch string(key) {
		case "groups":
			slot = 0
		case "prefix_len":
			slot = 1
		case "prompt_len":
			slot = 2
		default:
			return s.fail(string(key), kvwire.ReasonUnknownField, "a manifest has groups, prefix_len and prompt_len only")
		}
		if seen[slot] {
			return s.fail(string(key), kvwire.ReasonDuplicateKey, "%q appears twice", key)
		}
		seen[slot] = true
		switch slot {
		case 0:
			return s.groupList()
		case 1:
			v, err := s.integer("prefix_len")
			s.prefixLen = v
			return err
		default:
			v, err := s.integer("prompt_len")
			s.promptLen = v
			return err
		}
	})
	if err != nil {
		return err
	}
	if s.next() != 0 {
		return s.fail("", kvwire.ReasonMalformedJSON, "%d bytes follow the manifest's object", len(s.raw)-s.pos)
	}
	for i, k := range [3]string{"groups", "prefix_len", "prompt_len"} {
		if !seen[i] {
			return kvwire.FieldError(kvwire.KindManifest, k, kvwire.ReasonMissingField, "key %q is absent", k)
		}
	}
	if s.prefixLen < 0 {
		return kvwire.FieldError(kvwire.KindManifest, "prefix_len", kvwire.ReasonOutOfRange, "%d is negative", s.prefixLen)
	}
	return nil
}

// object reads {"key": value, …} at s.pos, calling member with each decoded
// key, positioned at its value.
func (s *manifestScan) object(field string, member func(key []byte) error) error {
	if s.next() != '{' {
		return s.malformed(field, "an object")
	}
	s.pos++
	if s.next() == '}' {
		s.pos++
		return nil
	}
	for {
		if s.next() != '"' {
			return s.malformed(field, "a key")
		}
		key, err := s.str(field)
		if err != nil {
			return err
		}
		if s.next() != ':' {
			return s.malformed(field, "':'")
		}
		s.pos++
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		switch s.next() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.malformed(field, "',' or '}'")
		}
	}
}

func (s *manifestScan) groupList() error {
	switch s.next() {
	case 'n':
		if s.literal("null") {
			return kvwire.FieldError(kvwire.KindManifest, "groups", kvwire.ReasonMissingField, "key \"groups\" is null")
		}
	case '[':
		s.pos++
		if s.next() == ']' {
			s.pos++
			return nil
		}
		for {
			if err := s.group(s.groupCount); err != nil {
				return err
			}
			s.groupCount++
			switch s.next() {
			case ',':
				s.pos++
			case ']':
				s.pos++
				return nil
			default:
				return s.malformed("groups", "',' or ']'")
			}
		}
	}
	return s.malformed("groups", "a list of groups")
}

func (s *manifestScan) group(i int) error {
	field := func(k string) string { return fmt.Sprintf("groups[%d].%s", i, k) }
	g := scannedGroup{min: math.MaxInt64, max: math.MinInt64}
	var haveID, haveIDs bool
	err := s.object(fmt.Sprint("groups[", i, "]"), func(key []byte) error {
		switch string(key) {
		case "group_id":
			if haveID {
				return s.fail(field("group_id"), kvwire.ReasonDuplicateKey, "\"group_id\" appears twice")
			}
			haveID = true
			switch s.next() {
			case '"':
				id, err := s.str(field("group_id"))
				g.id = string(id)
				return err
			case 'n':
				if s.literal("null") {
					return kvwire.FieldError(kvwire.KindManifest, field("group_id"), kvwire.ReasonMissingField, "null")
				}
			}
			return s.fail(field("group_id"), kvwire.ReasonInvalidValue, "not a string")
		case "block_ids":
			if haveIDs {
				return s.fail(field("block_ids"), kvwire.ReasonDuplicateKey, "\"block_ids\" appears twice")
			}
			haveIDs = true
			return s.blockIDs(i, &g)
		}
		return s.fail(field(string(key)), kvwire.ReasonUnknownField, "a group has group_id and block_ids only")
	})
	if err != nil {
		return err
	}
	if !haveID {
		return kvwire.FieldError(kvwire.KindManifest, field("group_id"), kvwire.ReasonMissingField, "absent")
	}
	if !haveIDs {
		return kvwire.FieldError(kvwire.KindManifest, field("block_ids"), kvwire.ReasonMissingField, "absent")
	}
	if s.keep < 0 || len(s.groups) < s.keep {
		s.groups = append(s.groups, g)
	}
	return nil
}

func (s *manifestScan) blockIDs(i int, g *scannedGroup) error {
	field := func() string { return fmt.Sprintf("groups[%d].block_ids", i) }
	switch s.next() {
	case '[':
	case 'n':
		if s.literal("null") {
			return kvwire.FieldError(kvwire.KindManifest, field(), kvwire.ReasonMissingField, "null")
		}
		fallthrough
	default:
		return s.malformed(field(), "a list of block ids")
	}
	s.pos++
	if s.next() == ']' {
		s.pos++
		return nil
	}
	for {
		s.ws()
		v, err := s.integer("")
		if err != nil {
			e := kvwire.AsError(err)
			e.Field = fmt.Sprintf("groups[%d].block_ids[%d]", i, g.count)
			return e
		}
		if v < g.min {
			g.min, g.minAt = v, g.count
		}
		if v > g.max {
			g.max, g.maxAt = v, g.count
		}
		if s.collect {
			g.ids = append(g.ids, v)
		}
		g.count++
		s.blocks++
		switch s.next() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.malformed(field(), "',' or ']'")
		}
	}
}

// integer reads a JSON number that must be an integer of 64 bits.
func (s *manifestScan) integer(field string) (int64, error) {
	start := s.pos
	neg := s.pos < len(s.raw) && s.raw[s.pos] == '-'
	if neg {
		s.pos++
	}
	if s.pos >= len(s.raw) {
		return 0, s.malformed(field, "an integer")
	}
	switch c := s.raw[s.pos]; {
	case c == 'n' && !neg && s.literal("null"):
		return 0, kvwire.FieldError(kvwire.KindManifest, field, kvwire.ReasonMissingField, "null")
	case (c == 't' || c == 'f') && !neg && (s.literal("true") || s.literal("false")):
		return 0, s.fail(field, kvwire.ReasonNotAnInteger, "a boolean, not an integer")
	case c == '"':
		return 0, s.fail(field, kvwire.ReasonNotAnInteger, "a string, not an integer")
	case c == '0':
		s.pos++
	case c >= '1' && c <= '9':
		for s.pos < len(s.raw) && s.raw[s.pos] >= '0' && s.raw[s.pos] <= '9' {
			s.pos++
		}
	default:
		return 0, s.malformed(field, "an integer")
	}
	if s.pos < len(s.raw) {
		if c := s.raw[s.pos]; c == '.' || c == 'e' || c == 'E' {
			return 0, s.fail(field, kvwire.ReasonNotAnInteger, "%s… has a fraction or exponent; block ids and lengths are integers", s.raw[start:s.pos])
		}
	}
	digits := s.raw[start:s.pos]
	if neg {
		digits = digits[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	var acc uint64
	for _, c := range digits {
		d := uint64(c - '0')
		if acc > (limit-d)/10 {
			return 0, s.fail(field, kvwire.ReasonOutOfRange, "%s does not fit in 64 bits", kvwire.Quote(s.raw[start:s.pos]))
		}
		acc = acc*10 + d
	}
	if neg {
		return int64(-acc), nil //nolint:gosec // acc <= 1<<63
	}
	return int64(acc), nil
}

// str decodes the JSON string at s.pos into s.scratch (valid until the next
// call), as Python's json does; a lone surrogate becomes U+FFFD.
func (s *manifestScan) str(field string) ([]byte, error) {
	s.pos++ // the opening quote
	s.scratch = s.scratch[:0]
	for s.pos < len(s.raw) {
		c := s.raw[s.pos]
		switch {
		case c == '"':
			s.pos++
			return s.scratch, nil
		case c == '\\':
			if err := s.escape(field); err != nil {
				return nil, err
			}
		case c < 0x20:
			return nil, s.fail(field, kvwire.ReasonMalformedJSON, "control byte 0x%02x inside a string", c)
		case c < utf8.RuneSelf:
			s.scratch = append(s.scratch, c)
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.raw[s.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, s.fail(field, kvwire.ReasonMalformedJSON, "a string holds bytes that are not UTF-8")
			}
			s.scratch = append(s.scratch, s.raw[s.pos:s.pos+size]...)
			s.pos += size
		}
	}
	return nil, s.fail(field, kvwire.ReasonMalformedJSON, "a string does not end")
}

func (s *manifestScan) escape(field string) error {
	if s.pos+1 >= len(s.raw) {
		return s.fail(field, kvwire.ReasonMalformedJSON, "a string ends inside an escape")
	}
	c := s.raw[s.pos+1]
	s.pos += 2
	if short, ok := shortEscapes[c]; ok {
		s.scratch = append(s.scratch, short)
		return nil
	}
	if c != 'u' {
		return s.fail(field, kvwire.ReasonMalformedJSON, "invalid escape \\%c", c)
	}
	r, ok := s.hex4()
	if !ok {
		return s.fail(field, kvwire.ReasonMalformedJSON, "invalid \\u escape")
	}
	if r >= 0xd800 && r < 0xdc00 && s.pos+1 < len(s.raw) && s.raw[s.pos] == '\\' && s.raw[s.pos+1] == 'u' {
		save := s.pos
		s.pos += 2
		if lo, ok := s.hex4(); ok && lo >= 0xdc00 && lo < 0xe000 {
			r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
		} else {
			s.pos = save
		}
	}
	if r >= 0xd800 && r < 0xe000 {
		r = utf8.RuneError
	}
	s.scratch = utf8.AppendRune(s.scratch, r)
	return nil
}

var shortEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

func (s *manifestScan) hex4() (rune, bool) {
	if len(s.raw)-s.pos < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s.raw[s.pos : s.pos+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	s.pos += 4
	return r, true
}

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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Difference is the first place, in document order, where two
// contracts' wire JSON differ: the field's path and each side's value there.
type Difference struct {
	// Field is the JSON path, e.g. "plan.groups[0].page_count"; for lists
	// of different lengths the list's own path.
	Field string
	// A and B are the values at Field, compact JSON of at most
	// maxDiffValue bytes ("absent" for a key one side lacks, "N items" for
	// lists of different lengths).
	A, B string
}

func (d Difference) String() string {
	return fmt.Sprintf("%s: %s vs %s", d.Field, d.A, d.B)
}

const (
	// maxDiffDepth bounds the nesting FirstDifference reads; a
	// contract is six levels deep.
	maxDiffDepth = 64
	maxDiffValue = 80
)

// FirstDifference compares two contracts' wire JSON (each at most
// plancontract.MaxBytes bytes, as CheckEnvelope admits)
// field by field, in the order the first one writes them, and returns the
// first difference; found is false when they hold the same values in the
// same order. Two canonical contracts (CacheContract.Canonical) write their
// keys in one order, so the difference is the field that changed. An input
// that is not JSON, or nests deeper than 64 levels, is an error.
func FirstDifference(a, b []byte) (d Difference, found bool, err error) {
	ta, err := parseDiffTree(a)
	if err != nil {
		return d, false, fmt.Errorf("the first contract: %w", err)
	}
	tb, err := parseDiffTree(b)
	if err != nil {
		return d, false, fmt.Errorf("the second contract: %w", err)
	}
	return diffNodes(ta, tb, "")
}

// diffNode is one JSON value, keys and elements in document order.
type diffNode struct {
	kind byte   // '{', '[', or 's' (string), 'n' (number), 'l' (literal)
	text string // a scalar's JSON text
	keys []string
	kids []*diffNode
}

func parseDiffTree(raw []byte) (*diffNode, error) {
	if err := CheckEnvelope(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := readDiffNode(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	return n, nil
}

func readDiffNode(dec *json.Decoder, depth int) (*diffNode, error) {
	if depth > maxDiffDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDiffDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &diffNode{kind: byte(t)}
		if t != '{' && t != '[' {
			return nil, fmt.Errorf("unexpected %q", t)
		}
		for dec.More() {
			if t == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, k.(string)) // the decoder gives object keys as strings
			}
			kid, err := readDiffNode(dec, depth+1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &diffNode{kind: 's', text: strconv.Quote(t)}, nil
	case json.Number:
		return &diffNode{kind: 'n', text: t.String()}, nil
	case bool:
		return &diffNode{kind: 'l', text: strconv.FormatBool(t)}, nil
	default: // nil
		return &diffNode{kind: 'l', text: "null"}, nil
	}
}

func diffNodes(a, b *diffNode, path string) (Difference, bool, error) {
	if a.kind != b.kind || a.text != b.text {
		return Difference{Field: orRoot(path), A: a.render(), B: b.render()}, true, nil
	}
	if a.kind == '[' {
		for i := range min(len(a.kids), len(b.kids)) {
			if d, found, _ := diffNodes(a.kids[i], b.kids[i], path+"["+strconv.Itoa(i)+"]"); found {
				return d, true, nil
			}
		}
		if len(a.kids) != len(b.kids) {
			return Difference{Field: orRoot(path), A: items(len(a.kids)), B: items(len(b.kids))}, true, nil
		}
		return Difference{}, false, nil
	}
	for i, k := range a.keys {
		if a.index(k) != i {
			continue // a repeated key: the last one counts
		}
		sub := joinPath(path, k)
		j := b.index(k)
		if j < 0 {
			return Difference{Field: sub, A: a.kids[i].render(), B: "absent"}, true, nil
		}
		if d, found, _ := diffNodes(a.kids[i], b.kids[j], sub); found {
			return d, true, nil
		}
	}
	for j, k := range b.keys {
		if a.index(k) < 0 {
			return Difference{Field: joinPath(path, k), A: "absent", B: b.kids[j].render()}, true, nil
		}
	}
	return Difference{}, false, nil
}

// index is the position of the last key k (JSON decoders keep the last of
// repeated keys), or -1.
func (n *diffNode) index(k string) int {
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == k {
			return i
		}
	}
	return -1
}

// render writes the value as compact JSON, cut at maxDiffValue bytes.
func (n *diffNode) render() string {
	var b strings.Builder
	n.write(&b)
	s := b.String()
	if len(s) > maxDiffValue {
		s = s[:maxDiffValue] + "…"
	}
	return s
}

func (n *diffNode) write(b *strings.Builder) {
	if b.Len() > maxDiffValue {
		return
	}
	switch n.kind {
	case '{', '[':
		b.WriteByte(n.kind)
		for i, kid := range n.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			if n.kind == '{' {
				b.WriteString(strconv.Quote(n.keys[i]))
				b.WriteByte(':')
			}
			kid.write(b)
		}
		if n.kind == '{' {
			b.WriteByte('}')
		} else {
			b.WriteByte(']')
		}
	default:
		b.WriteString(n.text)
	}
}

func joinPath(path, key string) string {
	if !plainKey(key) {
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func orRoot(path string) string {
	if path == "" {
		return "(the whole contract)"
	}
	return path
}

func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.Itoa(n) + " items"
}

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
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// compact is what json.dumps(json.loads(b), separators=(",", ":")) writes.
func compact(v Value) string {
	w := &CompactWriter{}
	w.Value(v)
	return string(w.Bytes())
}

// What Python 3.11's json.loads makes of each input, printed back with
// json.dumps(v, separators=(",", ":")), or its refusal.
func TestParseAgreesWithPython(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"ints, floats and bools stay apart", `[1, 1.0, true]`, `[1,1.0,true]`},
		{"the last of duplicate keys, NaN", `{"a": 1, "a": 2, "b": NaN}`, `{"a":2,"b":NaN}`},
		{"a lone surrogate escape stays", `"\ud800x"`, `"\ud800x"`},
		{"overflowing floats are infinite", `[1e400, -Infinity]`, `[Infinity,-Infinity]`},
		{"integers of any size", `12345678901234567890123`, `12345678901234567890123`},
		{"a UTF-8 byte order mark", "\xef\xbb\xbf{\"k\": []}", `{"k":[]}`},
		{"UTF-16 guessed from the zero bytes", "[\x00\"\x00\xe9\x00\"\x00]\x00", `["\u00e9"]`},
		{"floats as repr", `[0.1, 1e16, 1e-5, 123.0, -0.0]`, `[0.1,1e+16,1e-05,123.0,-0.0]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := Parse([]byte(c.in))
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.in, err)
			}
			if got := compact(v); got != c.want {
				t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
			}
		})
	}
	for _, c := range []struct{ in, want string }{
		{`01`, "Extra data at character 1"},
		{`[1,]`, "Expecting value at character 3"},
		{`{"a" 1}`, "Expecting ':' delimiter at character 5"},
		{"\"\x01\"", "Invalid control character at character 1"},
		{strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1), "RecursionError"},
		{strings.Repeat("1", maxIntDigits+1), "digits"},
	} {
		if _, err := Parse([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%.20q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

// Python's values compare as Python compares them: 1 == 1.0 == True, NaN
// equals nothing, a string is not a number.
func TestValueSemantics(t *testing.T) {
	parse := func(s string) Value {
		v, err := Parse([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if !Equal(parse("1"), parse("1.0")) || !Equal(parse("1"), parse("true")) {
		t.Error("1, 1.0 and True are equal in Python")
	}
	if Equal(parse("NaN"), parse("NaN")) || Equal(parse(`"1"`), parse("1")) {
		t.Error("NaN equals nothing and a string is no number")
	}
	if less, err := Less(parse("1"), parse("1.5")); err != nil || !less {
		t.Errorf("1 < 1.5: %v %v", less, err)
	}
	if _, err := Less(parse(`"a"`), parse("1")); err == nil {
		t.Error("comparing a string with a number raises TypeError")
	}
	if got := parse(`{"b": 1, "a": [2, "x"]}`).Repr(); got != `{"b":1,"a":[2,"x"]}` {
		t.Errorf("Repr = %s", got)
	}
}

// Every value Parse accepts prints back (CompactWriter) as text that parses
// to an equal value, printed the same; and on the inputs where Python's
// grammar and Go's are the same (UTF-8 without NUL bytes, no NaN or
// Infinity, shallow, short numbers) Parse accepts what encoding/json does.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x\u00e9"], "b": null}`, `[true, false, NaN]`, `"\ud83d\ude00"`, `-0.0e-3`, `[[]]`, `{"a":1,"a":2}`, `1 2`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Parse(b)
		if err == nil {
			out := compact(v)
			back, err := Parse([]byte(out))
			if err != nil {
				t.Fatalf("%q printed as %s, which does not parse: %v", b, out, err)
			}
			if again := compact(back); again != out {
				t.Fatalf("%q printed as %s, then as %s", b, out, again)
			}
		}
		if !utf8.Valid(b) || strings.ContainsRune(string(b), 0) || strings.HasPrefix(string(b), "\uFEFF") ||
			strings.Contains(string(b), "NaN") || strings.Contains(string(b), "Infinity") || len(b) > 512 {
			return
		}
		if accepted := err == nil; accepted != json.Valid(b) {
			t.Fatalf("Parse(%q) accepted %v, encoding/json %v (%v)", b, accepted, !accepted, err)
		}
	})
}

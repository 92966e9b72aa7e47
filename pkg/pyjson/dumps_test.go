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
	"testing"
)

func TestPythonStringEscapes(t *testing.T) {
	cases := map[string]string{
		`a"b\c`:      `"a\"b\\c"`,
		"t\tn\n":     `"t\tn\n"`,
		"\x01":       `"\u0001"`,
		"é":          `"\u00e9"`,
		"\U0001F600": `"\ud83d\ude00"`,
		"\x7f":       `"\u007f"`,
	}
	for in, want := range cases {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("%q: got %s want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(want), &back); err != nil || back != in {
			t.Errorf("%s does not read back as %q: %q %v", want, in, back, err)
		}
	}
}

// An object is written as json.dumps writes a dict with its default
// separators: ", " and ": ", null for sizes not learned yet, [] for nil lists.
func TestObjectIsWrittenAsJSONDumps(t *testing.T) {
	o := NewObject(0)
	o.Str("role", "decode")
	o.Int("rank", 3)
	o.IntOrNull("size", 0)
	o.StrOrNull("ip", nil)
	o.Bool("mla", false)
	o.Ints("lens", nil)
	o.Ints("more", []int64{1, 2})
	want := `{"role": "decode", "rank": 3, "size": null, "ip": null, "mla": false, "lens": [], "more": [1, 2]}`
	if got := string(o.Bytes()); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

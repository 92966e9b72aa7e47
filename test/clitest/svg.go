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

package clitest

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// SVGCounts parses a topology picture (pdtopo plan -o svg) as XML and
// counts its rank and edge groups and, among the edges, the dummies.
func SVGCounts(t testing.TB, doc string) (ranks, edges, dummies int) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(doc))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not XML: %v\n%.300s", err, doc)
		}
		if el, ok := tok.(xml.StartElement); ok && el.Name.Local == "g" {
			for _, a := range el.Attr {
				switch {
				case a.Name.Local != "class":
				case strings.HasPrefix(a.Value, "rank "):
					ranks++
				case a.Value == "edge real":
					edges++
				case a.Value == "edge dummy":
					edges++
					dummies++
				}
			}
		}
	}
}

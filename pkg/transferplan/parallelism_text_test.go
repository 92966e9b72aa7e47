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
	"strings"
	"testing"
)

func TestParseParallelism(t *testing.T) {
	cases := []struct {
		in      string
		want    Parallelism
		wantErr string
	}{
		{in: "tp=4,dp=1", want: Parallelism{TPSize: 4, DPSize: 1}},
		{in: "tp=16,dp=8", want: Parallelism{TPSize: 16, DPSize: 8}},
		{in: "tp=4", wantErr: "not of the form"},
		{in: "dp=1,tp=4", wantErr: `should start with "tp="`},
		{in: "tp=4,dp=3", wantErr: "does not divide"},
		{in: "tp=0,dp=1", wantErr: "between 1 and"},
		{in: "tp=+4,dp=1", wantErr: "not a positive number"},
		{in: "tp=-4,dp=1", wantErr: "not a positive number"},
		{in: "tp=,dp=1", wantErr: "not a positive number"},
		{in: "tp=4,dp=1,pp=2", wantErr: "not a positive number"},
		{in: "tp=99999999999999999999,dp=1", wantErr: "not a positive number"},
		{in: strings.Repeat("x", 65), wantErr: "65 bytes"},
	}
	for _, c := range cases {
		got, err := ParseParallelism(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ParseParallelism(%q) = %v, %v; want an error containing %q", c.in, got, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseParallelism(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if s := got.String(); s != c.in {
			t.Errorf("String() = %q, want %q", s, c.in)
		}
	}
}

func FuzzParseParallelism(f *testing.F) {
	f.Add("tp=4,dp=1")
	f.Add("tp=8,dp=x")
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseParallelism(s)
		if err != nil {
			return
		}
		if again, err := ParseParallelism(p.String()); err != nil || again != p {
			t.Fatalf("%q parsed as %v, whose text %q parses as %v, %v", s, p, p.String(), again, err)
		}
	})
}

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

package announce

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       Instance
		err        string
	}{
		{"p8", "bootstrap=127.0.0.1:8998\n", Instance{Name: "p8", Bootstrap: "127.0.0.1:8998"}, ""},
		{"p4-1", "# by hand\nbootstrap=127.0.0.2:40000\nprefill=tp=4,dp=1\ndecode=tp=2,dp=1\n",
			Instance{Name: "p4-1", Bootstrap: "127.0.0.2:40000", Prefill: "tp=4,dp=1", Decode: "tp=2,dp=1"}, ""},
		{"p8", "", Instance{}, "no bootstrap=HOST:PORT line"},
		{"p8", "bootstrap=10.0.0.1:8998", Instance{}, `bootstrap "10.0.0.1:8998": want a loopback IP:port`},
		{"p8", "bootstrap=127.0.0.1:0", Instance{}, "want a loopback IP:port"},
		{"p8", "bootstrap=localhost:8998", Instance{}, "want a loopback IP:port"},
		{"p8", "bootstrap=127.0.0.1:8998\ndecode=tp=0,dp=1", Instance{}, `line 2: decode "tp=0,dp=1": want tp=N,dp=M`},
		{"p8", "bootstrap=127.0.0.1:8998\ncolour=blue", Instance{}, `line 2: unknown key "colour"`},
		{"p8", "127.0.0.1:8998", Instance{}, "line 1: \"127.0.0.1:8998\" is not key=value"},
		{"../x", "bootstrap=127.0.0.1:8998", Instance{}, `announcement name "../x"`},
		{"p8", "bootstrap=127.0.0.1:8998\n#" + strings.Repeat("x", MaxFileBytes), Instance{}, "bytes, at most 1024"},
	} {
		t.Run(tc.name+"/"+tc.err, func(t *testing.T) {
			got, err := Parse(tc.name, []byte(tc.file))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse(%q) error %v, want one saying %q", tc.file, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Parse(%q) = %+v, %v; want %+v", tc.file, got, err, tc.want)
			}
		})
	}
}

func TestWriteReadRoundTripAndBounds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "local-prefills")
	if got, err := Read(dir); got != nil || err != nil {
		t.Fatalf("Read of a missing directory = %v, %v; want nothing", got, err)
	}
	want := Instance{Name: "p8-40123", Bootstrap: "127.0.0.1:40123", Prefill: "tp=8,dp=1", Decode: "tp=4,dp=1"}
	path, err := Write(dir, want)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "p8-40123.prefill" {
		t.Errorf("written as %s", path)
	}
	if _, err := Write(dir, Instance{Name: "bad", Bootstrap: "8.8.8.8:1"}); err == nil {
		t.Error("Write of a non-loopback address succeeded")
	}
	// A refused file and more than MaxInstances: the valid ones up to the
	// bound are read, the error names the others.
	if err := os.WriteFile(filepath.Join(dir, "broken.prefill"), []byte("bootstrap=nowhere"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range MaxInstances {
		if _, err := Write(dir, Instance{Name: fmt.Sprintf("q%02d", i), Bootstrap: fmt.Sprintf("127.0.0.1:%d", 41000+i)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(dir)
	if len(got) != MaxInstances {
		t.Fatalf("read %d instances, want the bound %d", len(got), MaxInstances)
	}
	if got[0] != want {
		t.Errorf("first instance %+v, want %+v", got[0], want)
	}
	if err == nil || !strings.Contains(err.Error(), "announcement broken line 1") || !strings.Contains(err.Error(), "at most 16 prefill instances") {
		t.Errorf("Read error %v, want the broken file and the bound named", err)
	}
}

// FuzzParse: any file is refused or read into an instance that formats
// back to a file read alike; nothing panics.
func FuzzParse(f *testing.F) {
	f.Add("p8", "bootstrap=127.0.0.1:8998\nprefill=tp=8,dp=1\ndecode=tp=4,dp=1\n")
	f.Add("x", "bootstrap=[::1]:1\n# c\n")
	f.Add("p", "decode=tp=1,dp=1")
	f.Fuzz(func(t *testing.T, name, file string) {
		in, err := Parse(name, []byte(file))
		if err != nil {
			return
		}
		again, err := Parse(name, in.Format())
		if err != nil || again != in {
			t.Fatalf("Parse(Format(%+v)) = %+v, %v", in, again, err)
		}
	})
}

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

package refenv

import "testing"

// Lookup on the shapes the scripts accept.
func TestLookup(t *testing.T) {
	env := Env("# A=commented\n\nA=1\n  B=2 \nC=\n")
	for key, want := range map[string]string{"A": "1", "B": "2", "C": ""} {
		if got, err := env.Lookup(key); err != nil || got != want {
			t.Errorf("Lookup(%s) = %q, %v; want %q", key, got, err, want)
		}
	}
	if _, err := env.Lookup("D"); err == nil {
		t.Error("Lookup of a missing key: no error")
	}
	if _, err := env.Lookup("# A"); err == nil {
		t.Error("Lookup found a commented-out key")
	}
}

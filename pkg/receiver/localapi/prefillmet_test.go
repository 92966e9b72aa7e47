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

package localapi

import (
	"fmt"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func met(tp, instances int) receiver.PrefillLayoutMet {
	return receiver.PrefillLayoutMet{Layout: transferplan.Parallelism{TPSize: tp, DPSize: 1}, Instances: instances}
}

// The ranks' reports merge to the most instances per layout, most first,
// bounded as one rank's report.
func TestPrefillLayoutsMet(t *testing.T) {
	many := make([]receiver.PrefillLayoutMet, 12)
	for i := range many {
		many[i] = met(i+1, 12-i)
	}
	cases := []struct {
		name  string
		ranks [][]receiver.PrefillLayoutMet
		want  string
	}{
		{"none", nil, "[]"},
		{"one rank", [][]receiver.PrefillLayoutMet{{met(8, 3), met(4, 1)}}, "[{tp=8,dp=1 3} {tp=4,dp=1 1}]"},
		{"ranks disagree: the most", [][]receiver.PrefillLayoutMet{{met(8, 2), met(4, 1)}, {met(4, 5)}}, "[{tp=4,dp=1 5} {tp=8,dp=1 2}]"},
		{"bounded", [][]receiver.PrefillLayoutMet{many}, "[{tp=1,dp=1 12} {tp=2,dp=1 11} {tp=3,dp=1 10} {tp=4,dp=1 9} {tp=5,dp=1 8} {tp=6,dp=1 7} {tp=7,dp=1 6} {tp=8,dp=1 5}]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(PrefillLayoutsMet(c.ranks)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

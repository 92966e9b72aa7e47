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

package main

import (
	"math"
	"testing"
)

func TestGoMemoryLimit(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name               string
		container, current int64
		want               int64
	}{
		{"config/manager's 512Mi: 85 %", 512 * mib, math.MaxInt64, 456340275},
		{"no container limit", 0, math.MaxInt64, math.MaxInt64},
		{"a lower GOMEMLIMIT stays", 512 * mib, 300 * mib, 300 * mib},
		{"a higher GOMEMLIMIT is lowered", 512 * mib, 1024 * mib, 456340275},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := goMemoryLimit(c.container, c.current); got != c.want {
				t.Errorf("goMemoryLimit(%d, %d) = %d, want %d", c.container, c.current, got, c.want)
			}
		})
	}
}

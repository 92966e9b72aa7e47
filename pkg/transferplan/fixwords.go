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
	"strconv"
	"strings"
)

// OrList joins numbers as "1, 2, 4 or 8", the way every fix names the
// sizes that would work.
func OrList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// divisorsUpTo lists n's divisors, at most max of them.
func divisorsUpTo(n, most int) []int {
	var out []int
	for d := 1; d <= n && len(out) < most; d++ {
		if n%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

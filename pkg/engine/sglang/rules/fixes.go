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

package rules

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// TPSizes are the --tp-size values fixes and Rank consider.
var TPSizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// loads reports whether SGLang can load the model at attention TP tp: the
// query heads split evenly, and the KV heads split or replicate evenly
// (QKVParallelLinear; MLA shards heads only). A fix never proposes a TP the
// model does not load at.
func loads(m Model, tp int) bool {
	if tp < 1 || (m.NumAttentionHeads > 0 && m.NumAttentionHeads%tp != 0) {
		return false
	}
	if m.UseMLA || m.NumKVHeads < 1 {
		return true
	}
	k := m.NumKVHeads
	return (tp >= k && tp%k == 0) || (tp < k && k%tp == 0)
}

// roleLoads: the role's TP is a multiple of its DP and the model loads at
// the attention TP.
func roleLoads(m Model, r Role) bool { return r.TP%r.dp() == 0 && loads(m, r.AttnTP()) }

// nearestTP returns up to two --tp-size values of one role (its DP kept),
// nearest first, at which the model loads and the pair is accepted.
func nearestTP(p Pair, decode bool) []int {
	cur := p.Prefill.TP
	if decode {
		cur = p.Decode.TP
	}
	var good []int
	for _, c := range TPSizes {
		q := p
		if decode {
			q.Decode.TP = c
		} else {
			q.Prefill.TP = c
		}
		r := q.Prefill
		if decode {
			r = q.Decode
		}
		if c != cur && roleLoads(p.Model, r) && check(q) == nil {
			good = append(good, c)
		}
	}
	slices.SortStableFunc(good, func(a, b int) int { return abs(a-cur) - abs(b-cur) })
	return good[:min(2, len(good))]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func orList(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, " or ")
}

// tpFix proposes the nearest decode, then prefill, TP sizes that work.
func tpFix(p Pair) []string {
	var out []string
	if d := nearestTP(p, true); len(d) > 0 {
		out = append(out, fmt.Sprintf("set decode --tp-size to %s (keeping prefill --tp-size %d, DP attention %d)", orList(d), p.Prefill.TP, p.Prefill.dp()))
	}
	if pr := nearestTP(p, false); len(pr) > 0 {
		out = append(out, fmt.Sprintf("set prefill --tp-size to %s (keeping decode --tp-size %d, DP attention %d)", orList(pr), p.Decode.TP, p.Decode.dp()))
	}
	return out
}

// fixFor is the fix of a refusal for reason under SGLang's rules.
func fixFor(p Pair, reason Reason) string {
	var fixes []string
	switch reason {
	case ReasonInvalidPair:
		return "give both roles a --tp-size and --page-size of at least 1, a DP-attention size dividing the TP size, and the backend mooncake or nixl"
	case ReasonPageSizeMismatch:
		fixes = []string{fmt.Sprintf("set decode --page-size to %d (prefill's)", p.Prefill.PageSize)}
	case ReasonKVCacheDtypeMismatch:
		fixes = []string{fmt.Sprintf("pass the same --kv-cache-dtype string on both roles, e.g. decode --kv-cache-dtype %s (prefill's)", p.Prefill.dtype())}
	case ReasonPPSizeMismatch:
		fixes = []string{"set decode --pp-size to 1"}
		if p.Prefill.pp() > 1 {
			fixes[0] += fmt.Sprintf(" or %d (prefill's)", p.Prefill.pp())
		}
	case ReasonTPRatioNotDivisible, ReasonHybridStateTPMismatch:
		fixes = tpFix(p)
	}
	if len(fixes) == 0 {
		return "no TP size within 1–16 of either role makes a pair SGLang serves"
	}
	return strings.Join(fixes, "; or ")
}

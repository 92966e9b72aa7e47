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

// TPSizes are the tensor-parallel sizes fixes and Rank consider.
var TPSizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// BlockSizes are the --block-size values vLLM's attention backends take
// (CacheConfig's choices on CUDA).
var BlockSizes = []int{1, 8, 16, 32, 64, 128}

// loads reports whether vLLM can load the model at tp: the attention heads
// split evenly, and the KV heads split or replicate evenly. A fix never
// proposes a TP the model does not load at.
func loads(m Model, tp int) bool {
	if m.NumAttentionHeads > 0 && m.NumAttentionHeads%tp != 0 {
		return false
	}
	if m.UseMLA {
		return true
	}
	k := m.NumKVHeads
	return (tp >= k && tp%k == 0) || (tp < k && k%tp == 0)
}

// nearest returns up to two candidates, nearest to cur first, for which
// the pair set(p, c) is accepted.
func nearest(p Pair, cur int, candidates []int, set func(Pair, int) Pair, ok func(int) bool) []int {
	var good []int
	for _, c := range candidates {
		if c != cur && (ok == nil || ok(c)) && check(set(p, c)) == nil {
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

func setDecodeTP(p Pair, v int) Pair    { p.Decode.TP = v; return p }
func setPrefillTP(p Pair, v int) Pair   { p.Prefill.TP = v; return p }
func setDecodeBlock(p Pair, v int) Pair { p.Decode.BlockSize = v; return p }
func setPrefillBlock(p Pair, v int) Pair {
	p.Prefill.BlockSize = v
	return p
}

// orList writes 2, 4 as "2 or 4".
func orList(vs []int) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, " or ")
}

// tpFix proposes the nearest decode TPs, then prefill TPs, that work.
func tpFix(p Pair) []string {
	loadable := func(c int) bool { return loads(p.Model, c) }
	var out []string
	if d := nearest(p, p.Decode.TP, TPSizes, setDecodeTP, loadable); len(d) > 0 {
		out = append(out, fmt.Sprintf("set decode --tensor-parallel-size to %s (keeping prefill TP %d)", orList(d), p.Prefill.TP))
	}
	if pr := nearest(p, p.Prefill.TP, TPSizes, setPrefillTP, loadable); len(pr) > 0 {
		out = append(out, fmt.Sprintf("set prefill --tensor-parallel-size to %s (keeping decode TP %d)", orList(pr), p.Decode.TP))
	}
	return out
}

// blockFix proposes the nearest decode, then prefill, block sizes that work.
func blockFix(p Pair, why string) []string {
	var out []string
	if d := nearest(p, p.Decode.BlockSize, BlockSizes, setDecodeBlock, nil); len(d) > 0 {
		out = append(out, fmt.Sprintf("set decode --block-size to %s (%s)", orList(d), why))
	}
	if pr := nearest(p, p.Prefill.BlockSize, BlockSizes, setPrefillBlock, nil); len(pr) > 0 {
		out = append(out, fmt.Sprintf("set prefill --block-size to %s", orList(pr)))
	}
	return out
}

// layoutFix proposes HND on both roles when that works.
func layoutFix(p Pair) []string {
	q := p
	q.Prefill.KVCacheLayout, q.Decode.KVCacheLayout = LayoutHND, LayoutHND
	if check(q) == nil {
		return []string{"set VLLM_KV_CACHE_LAYOUT=HND on both roles (NixlConnector's default)"}
	}
	return nil
}

// fixFor is the fix of a refusal for reason: the flags to change and the
// nearest values that make the whole pair accepted, found by judging them.
// Versions that differ as well are a second fix: the layouts are searched
// as if both roles ran one build, which no layout change brings about.
func fixFor(p Pair, reason Reason) string {
	if v := checkVersion(p); v != nil && reason != ReasonEngineVersionMismatch {
		q := p
		q.Prefill.Version, q.Decode.Version = "", ""
		return layoutFixFor(q, reason) + "; and " + fixFor(p, ReasonEngineVersionMismatch)
	}
	return layoutFixFor(p, reason)
}

// layoutFixFor is fixFor of a pair whose versions agree.
func layoutFixFor(p Pair, reason Reason) string {
	var fixes []string
	switch reason {
	case ReasonInvalidPair:
		return "give both roles a TP and a --block-size of at least 1, HND or NHD, and the model's KV heads"
	case ReasonUnsupportedConnector:
		return "use kv_connector NixlConnector, or judge the pair with the engine its connector belongs to"
	case ReasonTPNotDivisible, ReasonReplicatedPrefillKV:
		fixes = tpFix(p)
	case ReasonEngineVersionMismatch:
		return fmt.Sprintf("run both roles on one vLLM build: decode on %s (prefill's), or prefill on %s too; mid-rollout, finish upgrading one role before the other's instances meet it",
			p.Prefill.Version, p.Decode.Version)
	case ReasonKVCacheDtypeMismatch:
		fixes = []string{fmt.Sprintf("pass the same --kv-cache-dtype string on both roles, e.g. decode --kv-cache-dtype %s (prefill's)", p.Prefill.dtype())}
	case ReasonBlockSizeNotMultiple:
		fixes = blockFix(p, fmt.Sprintf("a multiple of prefill's %d", p.Prefill.BlockSize))
	case ReasonBlockSizeNotEqual, ReasonHeadSplitWithHeteroBlocks:
		fixes = append(blockFix(p, fmt.Sprintf("prefill's %d: equal block sizes", p.Prefill.BlockSize)), tpFix(p)...)
	case ReasonKVCacheLayoutMismatch, ReasonLayoutNotBlockContiguous, ReasonNHDMultiSourceRead:
		fixes = append(layoutFix(p), tpFix(p)...)
	case ReasonBlockLengthMismatch:
		return "check the model's head_dim and KV heads: both roles must load the same model"
	}
	if len(fixes) == 0 {
		fixes = nearestRoles(p)
	}
	if len(fixes) == 0 {
		if fix := unloadedFix(p); fix != "" {
			return fix
		}
		return "no layout within TP 1–16 and block sizes " + orList(BlockSizes) + " of either role makes a pair vLLM accepts"
	}
	return strings.Join(fixes, "; or ")
}

// unloadedFix names a role whose TP vLLM does not load the model at, when
// no change of the other role can help (Llama 4 Scout's 40 heads at TP 16).
func unloadedFix(p Pair) string {
	for _, r := range []struct {
		name string
		role Role
	}{{"prefill", p.Prefill}, {"decode", p.Decode}} {
		if r.role.TP > 0 && !loads(p.Model, r.role.TP) {
			return fmt.Sprintf("vLLM does not load the model at %s --tensor-parallel-size %d (%d attention heads, %d KV heads): give it a TP that divides the attention heads and divides the KV heads or is a multiple of them, then judge the pair again",
				r.name, r.role.TP, p.Model.NumAttentionHeads, p.Model.NumKVHeads)
		}
	}
	return ""
}

// nearestRoles is the fix when no one setting suffices (several rules
// fail at once): per role, the accepted layout that changes the fewest
// settings, then moves TP and block size least.
func nearestRoles(p Pair) []string {
	var out []string
	for _, side := range []Side{SideDecode, SidePrefill} {
		cur, other := p.Decode, p.Prefill
		name := "decode"
		if side == SidePrefill {
			cur, other, name = p.Prefill, p.Decode, "prefill"
		}
		best, bestDist := Role{}, -1
		for _, tp := range TPSizes {
			for _, bs := range BlockSizes {
				for _, l := range []Layout{LayoutHND, LayoutNHD} {
					r := Role{TP: tp, BlockSize: bs, KVCacheLayout: l, KVCacheDtype: other.dtype(), Version: other.Version}
					q := p
					if side == SideDecode {
						q.Decode = r
					} else {
						q.Prefill = r
					}
					if !loads(p.Model, tp) || check(q) != nil {
						continue
					}
					if d := distance(cur, r); bestDist < 0 || d < bestDist {
						best, bestDist = r, d
					}
				}
			}
		}
		if bestDist >= 0 {
			out = append(out, fmt.Sprintf("run %s at --tensor-parallel-size %d, --block-size %d, VLLM_KV_CACHE_LAYOUT=%s, --kv-cache-dtype %s",
				name, best.TP, best.BlockSize, best.KVCacheLayout, best.KVCacheDtype))
		}
	}
	return out
}

// distance orders alternatives to a role: settings changed first, then
// how far TP and block size move.
func distance(a, b Role) int {
	d := abs(a.TP-b.TP)*10 + abs(a.BlockSize-b.BlockSize)/8
	for _, changed := range []bool{a.TP != b.TP, a.BlockSize != b.BlockSize, a.layout() != b.layout(), a.dtype() != b.dtype()} {
		if changed {
			d += 10000
		}
	}
	return d
}

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

import "fmt"

// Judge is SGLang's verdict on the pair, as its decode handshake, its
// route lookups and the prefill's last-chunk transfer would reach it, with
// pdtopo's refusal where SGLang's missing divisibility check would fail
// requests or read the wrong heads. A refusal names its fix.
func Judge(p Pair) Verdict {
	if r := Refuse(p); r != nil {
		return Verdict{Refusal: r}
	}
	return Verdict{DecodeRanks: decodeRanks(p)}
}

// Refuse is Judge's refusal without the mapping: the rules read the layout
// numbers only, so a verdict costs the same at TP 4096 as at TP 4. Nil
// when SGLang serves the pair (and pdtopo too).
func Refuse(p Pair) *Refusal {
	if r := check(p); r != nil {
		return r.withFix(fixFor(p, r.Reason))
	}
	return nil
}

// check runs the rules in the order SGLang meets them: the handshake
// (rules 1–3), the first request's route lookups (rule 6), the prefill's
// last chunk (rule 8); then what SGLang never checks (rule 7).
func check(p Pair) *Refusal {
	for _, rule := range []func(Pair) *Refusal{
		checkValid,
		checkPageSize,
		checkDtype,
		checkPP,
		checkDecodeLargerDivides,
		checkHybridState,
		checkPrefillLargerDivides,
	} {
		if r := rule(p); r != nil {
			return r
		}
	}
	return nil
}

func refusal(reason Reason, field, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// checkValid refuses what SGLang does not start with.
func checkValid(p Pair) *Refusal {
	if p.Backend != "" && p.Backend != BackendMooncake && p.Backend != BackendNixl {
		return refusal(ReasonInvalidPair, "kvConnector", "%q is neither mooncake nor nixl", p.Backend)
	}
	for _, r := range []struct {
		name string
		role Role
	}{{"prefill", p.Prefill}, {"decode", p.Decode}} {
		switch {
		case r.role.TP < 1 || r.role.DP < 0 || r.role.PP < 0 || r.role.PageSize < 1:
			return refusal(ReasonInvalidPair, r.name, "TP %d, DP %d, PP %d, page size %d: TP and page size at least 1, DP and PP not negative",
				r.role.TP, r.role.DP, r.role.PP, r.role.PageSize)
		case r.role.TP%r.role.dp() != 0:
			return refusal(ReasonInvalidPair, r.name+".dataParallelSize", "DP-attention size %d does not divide TP %d", r.role.dp(), r.role.TP)
		}
	}
	return nil
}

// Rule 1: common/conn.py, CommonKVManager.try_ensure_parallel_info: the
// prefill's page_size equal to the decode's.
func checkPageSize(p Pair) *Refusal {
	if p.Prefill.PageSize != p.Decode.PageSize {
		return refusal(ReasonPageSizeMismatch, "decode.pageSize",
			"prefill --page-size %d, decode %d: SGLang needs the same page size on both roles", p.Prefill.PageSize, p.Decode.PageSize)
	}
	return nil
}

// Rule 2: common/conn.py, CommonKVManager.try_ensure_parallel_info: the
// --kv-cache-dtype strings equal (auto is not bfloat16 there).
func checkDtype(p Pair) *Refusal {
	if p.Prefill.dtype() != p.Decode.dtype() {
		return refusal(ReasonKVCacheDtypeMismatch, "decode.kvCacheDtype",
			"prefill --kv-cache-dtype %q, decode %q: SGLang compares the strings, so the handshake fails even where the bytes agree",
			p.Prefill.dtype(), p.Decode.dtype())
	}
	return nil
}

// Rule 3: common/conn.py, CommonKVManager._resolve_rank_mapping: decode PP
// equal to prefill PP, or 1.
func checkPP(p Pair) *Refusal {
	if d := p.Decode.pp(); d != 1 && d != p.Prefill.pp() {
		return refusal(ReasonPPSizeMismatch, "decode.pipelineParallelSize",
			"decode --pp-size %d is neither 1 nor prefill's %d", d, p.Prefill.pp())
	}
	return nil
}

// Rule 6: common/conn.py, CommonKVReceiver._setup_bootstrap_infos and
// _get_bootstrap_info_from_server: decode attention TP d above prefill's p
// and not a multiple maps some decode ranks to prefill rank (r % d) //
// (d // p) ≥ p, which the bootstrap server's _handle_route_get answers with
// a 404 on the first request.
func checkDecodeLargerDivides(p Pair) *Refusal {
	pa, da := p.Prefill.AttnTP(), p.Decode.AttnTP()
	if da > pa && da%pa != 0 {
		return refusal(ReasonTPRatioNotDivisible, "decode.tensorParallelSize",
			"decode attention TP %d is above prefill's %d and not a multiple of it: SGLang maps decode rank %d to prefill rank %d, which does not exist, and fails that rank's requests (a route 404 on the first request)",
			da, pa, da-1, (da-1)/(da/pa))
	}
	return nil
}

// Rule 8: mooncake/conn.py, MooncakeKVManager.maybe_send_extra (at
// SGLANG_MOONCAKE_CONN_COMMIT) and nixl/conn.py, NixlKVManager.maybe_send_extra:
// a non-MLA model's sliding-window (SWA) or DSA state pool at different
// attention TP raises on the prefill on a request's last chunk. Mamba
// state is sliced per tensor and passes.
func checkHybridState(p Pair) *Refusal {
	m := p.Model
	if m.UseMLA || p.Prefill.AttnTP() == p.Decode.AttnTP() || (m.SlidingWindowLayers == 0 && !m.DSAIndexer) {
		return nil
	}
	pool := "sliding-window"
	if m.SlidingWindowLayers == 0 {
		pool = "DSA indexer"
	}
	return refusal(ReasonHybridStateTPMismatch, "decode.tensorParallelSize",
		"the model's %s state pool is not MLA, and prefill attention TP %d differs from decode's %d: SGLang's prefill raises on the last chunk of every request (\"PD Disaggregation does NOT support PD different TP sizes for non-MLA SWA hybrid models yet\") and the decode waits for its timeout",
		pool, p.Prefill.AttnTP(), p.Decode.AttnTP())
}

// Rule 7, pdtopo's own: SGLang (_resolve_rank_mapping) divides with // and
// never checks that prefill attention TP p above decode's d is a
// multiple. With p = 6, d = 4 decode rank r reads prefill rank r only: a
// non-MLA rank may get another rank's KV heads, and prefill ranks d … p-1
// are read by nobody, so their requests time out.
func checkPrefillLargerDivides(p Pair) *Refusal {
	pa, da := p.Prefill.AttnTP(), p.Decode.AttnTP()
	if pa > da && pa%da != 0 {
		r := refusal(ReasonTPRatioNotDivisible, "decode.tensorParallelSize",
			"prefill attention TP %d is above decode's %d and not a multiple of it: SGLang accepts the pair but gives decode rank r the prefill ranks from r × (%d // %d), so decode ranks read KV heads they do not hold and prefill ranks %d–%d are read by nobody (pdtopo is stricter than the engine here)",
			pa, da, pa, da, da*(pa/da), pa-1)
		r.StricterThanEngine = true
		return r
	}
	return nil
}

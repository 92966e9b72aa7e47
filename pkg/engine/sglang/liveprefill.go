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

package sglang

import (
	"strconv"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/sglang/rules"
)

// SGLang's prefill bootstrap server (CommonKVBootstrapServer in
// python/sglang/srt/disaggregation/common/conn.py, at the commit of
// conformance/sglang/reference.env) answers decode's handshake,
// CommonKVManager.try_ensure_parallel_info, with the prefill's parallel
// info: a GET of ParallelInfoQuery, answered by _handle_route_get as the
// JSON of dataclasses.asdict(PrefillServerInfo), 503 until every prefill
// rank has registered. Decode builds PrefillServerInfo(**data) from it,
// compares page_size and kv_cache_dtype with its own (unless null), and
// maps its ranks over attn_tp_size, attn_cp_size and pp_size
// (_resolve_rank_mapping). pdtopo reads the same answer to compare the
// running prefill with spec.prefill (parallelinfo.go decodes it).

// ParallelInfoQuery is the request try_ensure_parallel_info sends: every
// rank -1 asks for the prefill's parallel info instead of one rank's
// socket.
const ParallelInfoQuery = "/route?prefill_dp_rank=-1&prefill_cp_rank=-1&target_tp_rank=-1&target_pp_rank=-1"

// MaxParallelInfoBytes caps the answer. SGLang's is about 400 bytes
// (fifteen keys, numbers, a dtype word and nulls); 4 KiB leaves room for a
// later version's keys and refuses a server that streams more.
const MaxParallelInfoBytes = 4 << 10

var _ engine.LivePrefillTeller = Engine{}

// LivePrefillQuery is the parallel-info request and its cap.
func (Engine) LivePrefillQuery() (string, int64) { return ParallelInfoQuery, MaxParallelInfoBytes }

// DecodeLivePrefill decodes a parallel-info answer (DecodeParallelInfo).
func (Engine) DecodeLivePrefill(answer []byte) (engine.LivePrefill, error) {
	return DecodeParallelInfo(answer)
}

// CompareLivePrefill lists where the live prefill differs from
// spec.prefill, in the order SGLang's decode checks them:
// try_ensure_parallel_info's page size and dtype (skipped, as there, when
// the server reports none), then what _resolve_rank_mapping maps over
// (attention TP, CP, PP) and the DP size the decode picks a group from.
func (Engine) CompareLivePrefill(spec pdv1.PDPairSpec, live engine.LivePrefill) engine.LiveComparison {
	r := role(spec, spec.Prefill)
	var out engine.LiveComparison
	num := func(field, name string, want, got int) {
		if want != got {
			out.Differences = append(out.Differences, engine.LiveDifference{Field: field, Name: name, Spec: strconv.Itoa(want), Live: strconv.Itoa(got)})
		}
	}
	if live.PageSize != 0 {
		num("prefill.tokensPerPage", "page_size", r.PageSize, live.PageSize)
	}
	if want := spec.RoleKVCacheDtype(spec.Prefill); live.KVCacheDtype != "" && live.KVCacheDtype != want {
		out.Differences = append(out.Differences, engine.LiveDifference{Field: "prefill.kvCacheDtype", Name: "kv_cache_dtype", Spec: want, Live: live.KVCacheDtype})
	}
	num("prefill.tensorParallelSize", "attn_tp_size", r.AttnTP(), live.AttentionTP)
	// The PDPair API has no context-parallel field: pairs are judged at CP 1.
	num("", "attn_cp_size", 1, live.CP)
	num("prefill.pipelineParallelSize", "pp_size", max(1, r.PP), live.PP)
	num("prefill.dataParallelSize", "dp_size", max(1, r.DP), live.DP)
	if len(out.Differences) > 0 {
		out.SpecFix = specFix(spec, r, live)
	}
	return out
}

// specFix is spec.prefill set to the running prefill: its TP is the
// attention TP times the DP-attention size (what --tp-size was), so a
// difference of DP alone changes tensorParallelSize too.
func specFix(spec pdv1.PDPairSpec, r rules.Role, live engine.LivePrefill) []engine.FieldValue {
	var out []engine.FieldValue
	set := func(field string, want, got int) {
		if want != got {
			out = append(out, engine.FieldValue{Field: field, Value: strconv.Itoa(got)})
		}
	}
	set("prefill.tensorParallelSize", r.TP, live.AttentionTP*live.DP)
	set("prefill.dataParallelSize", max(1, r.DP), live.DP)
	set("prefill.pipelineParallelSize", max(1, r.PP), live.PP)
	if live.PageSize != 0 {
		set("prefill.tokensPerPage", r.PageSize, live.PageSize)
	}
	if live.KVCacheDtype != "" && live.KVCacheDtype != spec.RoleKVCacheDtype(spec.Prefill) {
		out = append(out, engine.FieldValue{Field: "prefill.kvCacheDtype", Value: live.KVCacheDtype})
	}
	return out
}

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
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	reference "github.com/pdtopo/pdtopo/conformance/sglang"
	"github.com/pdtopo/pdtopo/pkg/engine"
)

// answer is a parallel-info answer as SGLang's _handle_route_get sends it:
// web.json_response(dataclasses.asdict(PrefillServerInfo(...))), i.e.
// json.dumps with its default separators, the dataclass's fields in order.
const answer = `{"attn_tp_size": 4, "attn_cp_size": 1, "dp_size": 2, "pp_size": 1, "page_size": 64, "kv_cache_dtype": "fp8_e4m3", "follow_bootstrap_room": true, "enable_dsa_cache_layer_split": false, "prefill_http_port": 30000, "target_tp_rank": null, "target_tp_ranks": null, "target_cp_ranks": null, "target_pp_ranks": null, "required_dst_info_num": null, "required_prefill_response_num": null}`

func TestDecodeParallelInfo(t *testing.T) {
	got, err := DecodeParallelInfo([]byte(answer))
	if err != nil {
		t.Fatal(err)
	}
	want := engine.LivePrefill{AttentionTP: 4, DP: 2, PP: 1, CP: 1, PageSize: 64, KVCacheDtype: "fp8_e4m3"}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

// Every golden case's bootstrapInfo is the answer SGLang's own bootstrap
// server gave for that case's prefill (conformance/sglang/generate.py runs
// _handle_route_get): each decodes to the prefill's layout and matches a
// spec of that prefill.
func TestDecodeParallelInfoGolden(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", filepath.FromSlash(reference.Verdicts)))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Cases []struct {
			ID                                             int
			BootstrapInfo                                  json.RawMessage
			PrefillTP, PrefillDP, PrefillAttnTP, PrefillPP int
			PrefillPageSize                                int
			PrefillKVCacheDtype                            string
		}
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Cases) < 100 {
		t.Fatalf("%d golden cases", len(file.Cases))
	}
	for _, c := range file.Cases {
		got, err := DecodeParallelInfo(c.BootstrapInfo)
		if err != nil {
			t.Fatalf("case %d: %v", c.ID, err)
		}
		want := engine.LivePrefill{AttentionTP: c.PrefillAttnTP, DP: c.PrefillDP, PP: c.PrefillPP, CP: 1, PageSize: c.PrefillPageSize, KVCacheDtype: c.PrefillKVCacheDtype}
		if got != want {
			t.Fatalf("case %d: decoded %+v, the case's prefill is %+v", c.ID, got, want)
		}
		spec := pdv1.PDPairSpec{Prefill: pdv1.FleetLayout{TensorParallelSize: int32(c.PrefillTP), DataParallelSize: ptr(int32(c.PrefillDP)),
			PipelineParallelSize: ptr(int32(c.PrefillPP)), TokensPerPage: ptr(int32(c.PrefillPageSize)), KVCacheDtype: pdv1.KVCacheDtype(c.PrefillKVCacheDtype)}}
		if d := New().CompareLivePrefill(spec, got); d.Differences != nil || d.SpecFix != nil {
			t.Fatalf("case %d: the prefill's own answer differs from its spec: %+v", c.ID, d)
		}
	}
}

func TestDecodeParallelInfoRefuses(t *testing.T) {
	replace := func(old, new string) string {
		if !strings.Contains(answer, old) {
			t.Fatalf("the answer has no %s", old)
		}
		return strings.Replace(answer, old, new, 1)
	}
	cases := []struct {
		name, answer, code string
	}{
		{"not JSON", "OK", "NotAnObject"},
		{"an array", "[1, 2]", "NotAnObject"},
		{"cut short", answer[:60], "NotJSON"},
		{"trailing", answer + " {}", "TrailingData"},
		{"unknown key", replace(`"pp_size": 1`, `"pp_size": 1, "tp_size": 8`), "UnknownKey"},
		{"key twice", replace(`"pp_size": 1`, `"pp_size": 1, "pp_size": 2`), "DuplicateKey pp_size"},
		{"missing size", replace(`"attn_cp_size": 1, `, ""), "MissingKey attn_cp_size"},
		{"missing page size", replace(`"page_size": 64, `, ""), "MissingKey page_size"},
		{"missing dtype", replace(`"kv_cache_dtype": "fp8_e4m3", `, ""), "MissingKey kv_cache_dtype"},
		{"missing follow", replace(`"follow_bootstrap_room": true, `, ""), "MissingKey follow_bootstrap_room"},
		{"size null", replace(`"attn_tp_size": 4`, `"attn_tp_size": null`), "NotAnInteger attn_tp_size"},
		{"size string", replace(`"attn_tp_size": 4`, `"attn_tp_size": "4"`), "NotAnInteger attn_tp_size"},
		{"size float", replace(`"attn_tp_size": 4`, `"attn_tp_size": 4.0`), "NotAnInteger attn_tp_size"},
		{"size bool", replace(`"dp_size": 2`, `"dp_size": true`), "NotAnInteger dp_size"},
		{"size zero", replace(`"pp_size": 1`, `"pp_size": 0`), "OutOfRange pp_size=0 (1..4096)"},
		{"size huge", replace(`"attn_tp_size": 4`, `"attn_tp_size": 99999999999999999999`), "NotAnInteger attn_tp_size"},
		{"size past the API", replace(`"attn_tp_size": 4`, `"attn_tp_size": 4097`), "OutOfRange attn_tp_size=4097 (1..4096)"},
		{"page negative", replace(`"page_size": 64`, `"page_size": -1`), "OutOfRange page_size=-1 (1..65536)"},
		{"dtype number", replace(`"fp8_e4m3"`, `8`), "NotADtype kv_cache_dtype"},
		{"dtype long", replace(`"fp8_e4m3"`, `"`+strings.Repeat("a", 33)+`"`), "NotADtype kv_cache_dtype"},
		{"dtype text", replace(`"fp8_e4m3"`, `"<script>"`), "NotADtype kv_cache_dtype"},
		{"dtype empty", replace(`"fp8_e4m3"`, `""`), "NotADtype kv_cache_dtype"},
		{"follow not bool", replace(`"follow_bootstrap_room": true`, `"follow_bootstrap_room": 1`), "NotBoolean follow_bootstrap_room"},
		{"port out of range", replace(`"prefill_http_port": 30000`, `"prefill_http_port": 70000`), "OutOfRange prefill_http_port=70000 (0..65535)"},
		{"too large", answer + strings.Repeat(" ", MaxParallelInfoBytes), "TooLarge"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeParallelInfo([]byte(c.answer))
			var le *engine.LivePrefillError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want a LivePrefillError", err)
			}
			if le.Code != c.code {
				t.Fatalf("code %q, want %q (%s)", le.Code, c.code, le.Detail)
			}
		})
	}
}

// What the engine takes without a word: null page size and dtype (its
// checks are skipped), the optional keys left out, the keys decode
// overwrites holding anything.
func TestDecodeParallelInfoAccepts(t *testing.T) {
	for name, a := range map[string]string{
		"nulls":          strings.Replace(strings.Replace(answer, `"page_size": 64`, `"page_size": null`, 1), `"fp8_e4m3"`, `null`, 1),
		"optional gone":  `{"attn_tp_size": 4, "attn_cp_size": 1, "dp_size": 2, "pp_size": 1, "page_size": 64, "kv_cache_dtype": "fp8_e4m3", "follow_bootstrap_room": false}`,
		"targets filled": strings.Replace(answer, `"target_tp_ranks": null`, `"target_tp_ranks": [0, 1]`, 1),
		"compact":        strings.ReplaceAll(strings.ReplaceAll(answer, ", ", ","), ": ", ":"),
	} {
		got, err := DecodeParallelInfo([]byte(a))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.AttentionTP != 4 || got.DP != 2 {
			t.Fatalf("%s: %+v", name, got)
		}
		if name == "nulls" && (got.PageSize != 0 || got.KVCacheDtype != "") {
			t.Fatalf("nulls decoded as %+v", got)
		}
	}
}

func TestCompareLivePrefill(t *testing.T) {
	// spec: prefill TP 8, DP-attention 2 (attention TP 4), PP 1, page 64, fp8_e4m3.
	spec := pdv1.PDPairSpec{TokensPerPage: ptr(int32(16)), KVCacheDtype: "auto",
		Prefill: pdv1.FleetLayout{TensorParallelSize: 8, DataParallelSize: ptr(int32(2)), TokensPerPage: ptr(int32(64)), KVCacheDtype: "fp8_e4m3"}}
	same := engine.LivePrefill{AttentionTP: 4, DP: 2, PP: 1, CP: 1, PageSize: 64, KVCacheDtype: "fp8_e4m3"}
	cases := []struct {
		name string
		edit func(*engine.LivePrefill)
		want []engine.LiveDifference
	}{
		{"matches", func(*engine.LivePrefill) {}, nil},
		{"not reported", func(l *engine.LivePrefill) { l.PageSize, l.KVCacheDtype = 0, "" }, nil},
		{"page", func(l *engine.LivePrefill) { l.PageSize = 16 }, []engine.LiveDifference{{Field: "prefill.tokensPerPage", Name: "page_size", Spec: "64", Live: "16"}}},
		{"dtype", func(l *engine.LivePrefill) { l.KVCacheDtype = "auto" }, []engine.LiveDifference{{Field: "prefill.kvCacheDtype", Name: "kv_cache_dtype", Spec: "fp8_e4m3", Live: "auto"}}},
		{"attention TP", func(l *engine.LivePrefill) { l.AttentionTP = 8 }, []engine.LiveDifference{{Field: "prefill.tensorParallelSize", Name: "attn_tp_size", Spec: "4", Live: "8"}}},
		{"CP", func(l *engine.LivePrefill) { l.CP = 2 }, []engine.LiveDifference{{Name: "attn_cp_size", Spec: "1", Live: "2"}}},
		{"PP", func(l *engine.LivePrefill) { l.PP = 2 }, []engine.LiveDifference{{Field: "prefill.pipelineParallelSize", Name: "pp_size", Spec: "1", Live: "2"}}},
		{"DP", func(l *engine.LivePrefill) { l.DP = 1 }, []engine.LiveDifference{{Field: "prefill.dataParallelSize", Name: "dp_size", Spec: "2", Live: "1"}}},
		{"two, in the engine's order", func(l *engine.LivePrefill) { l.DP, l.PageSize = 4, 32 }, []engine.LiveDifference{
			{Field: "prefill.tokensPerPage", Name: "page_size", Spec: "64", Live: "32"},
			{Field: "prefill.dataParallelSize", Name: "dp_size", Spec: "2", Live: "4"}}},
	}
	for _, c := range cases {
		live := same
		c.edit(&live)
		if got := New().CompareLivePrefill(spec, live).Differences; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
	// The role's fields unset: spec.tokensPerPage and spec.kvCacheDtype.
	spec.Prefill.TokensPerPage, spec.Prefill.KVCacheDtype = nil, ""
	got := New().CompareLivePrefill(spec, same).Differences
	want := []engine.LiveDifference{{Field: "prefill.tokensPerPage", Name: "page_size", Spec: "16", Live: "64"}, {Field: "prefill.kvCacheDtype", Name: "kv_cache_dtype", Spec: "auto", Live: "fp8_e4m3"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec-wide fields: got %+v, want %+v", got, want)
	}
}

// SpecFix sets spec.prefill to the running prefill: --tp-size is the
// attention TP times the DP-attention size, so a DP that differs alone
// changes tensorParallelSize too; a CP the API has no field for gives none.
func TestCompareLivePrefillSpecFix(t *testing.T) {
	spec := pdv1.PDPairSpec{Prefill: pdv1.FleetLayout{TensorParallelSize: 8, DataParallelSize: ptr(int32(2)), TokensPerPage: ptr(int32(64)), KVCacheDtype: "auto"}}
	cases := []struct {
		name string
		live engine.LivePrefill
		want []engine.FieldValue
	}{
		{"DP alone", engine.LivePrefill{AttentionTP: 4, DP: 4, PP: 1, CP: 1}, []engine.FieldValue{{Field: "prefill.tensorParallelSize", Value: "16"}, {Field: "prefill.dataParallelSize", Value: "4"}}},
		{"attention TP alone", engine.LivePrefill{AttentionTP: 2, DP: 2, PP: 1, CP: 1}, []engine.FieldValue{{Field: "prefill.tensorParallelSize", Value: "4"}}},
		{"page and dtype", engine.LivePrefill{AttentionTP: 4, DP: 2, PP: 1, CP: 1, PageSize: 16, KVCacheDtype: "bf16"}, []engine.FieldValue{{Field: "prefill.tokensPerPage", Value: "16"}, {Field: "prefill.kvCacheDtype", Value: "bf16"}}},
		{"PP", engine.LivePrefill{AttentionTP: 4, DP: 2, PP: 2, CP: 1}, []engine.FieldValue{{Field: "prefill.pipelineParallelSize", Value: "2"}}},
		{"CP alone", engine.LivePrefill{AttentionTP: 4, DP: 2, PP: 1, CP: 2}, nil},
	}
	for _, c := range cases {
		if got := New().CompareLivePrefill(spec, c.live).SpecFix; !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func BenchmarkDecodeParallelInfo(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeParallelInfo([]byte(answer)); err != nil {
			b.Fatal(err)
		}
	}
}

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

package v1

import (
	"errors"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

func TestBootstrapBodiesGolden(t *testing.T) {
	// Bytes as Python's json.dumps (default separators) writes the dicts.
	reg := RankRegistration{Role: kvwire.RolePrefill, WorldSize: 8, DPSize: 2, RankIP: "10.0.0.3", RankPort: 41000, EngineRank: 5,
		BufferLens: BufferLens{KVItemLens: []int64{2048, 2048}, KVUnitLens: []int64{256, 256}}}
	want := `{"role": "Prefill", "world_size": 8, "dp_size": 2, "rank_ip": "10.0.0.3", "rank_port": 41000, "engine_rank": 5, "enable_mla_l1_5_cache": false, ` +
		`"kv_item_lens": [2048, 2048], "kv_unit_lens": [256, 256], "state_item_lens": [], "state_unit_lens": []}`
	if got := string(reg.MarshalPython()); got != want {
		t.Fatalf("registration:\n got %s\nwant %s", got, want)
	}
	info := ParallelInfo{PrefillTPSize: 8, PrefillDPSize: 1, EnableMLAL15Cache: true, BufferLens: BufferLens{StateItemLens: []int64{8192}}}
	want = `{"prefill_tp_size": 8, "prefill_dp_size": 1, "enable_mla_l1_5_cache": true, "kv_item_lens": [], "kv_unit_lens": [], "state_item_lens": [8192], "state_unit_lens": []}`
	if got := string(info.MarshalPython()); got != want {
		t.Fatalf("parallel info:\n got %s\nwant %s", got, want)
	}
	// Before any rank registers the reference answers null sizes.
	want = `{"prefill_tp_size": null, "prefill_dp_size": null, "enable_mla_l1_5_cache": false, "kv_item_lens": [], "kv_unit_lens": [], "state_item_lens": [], "state_unit_lens": []}`
	if got := string((&ParallelInfo{}).MarshalPython()); got != want {
		t.Fatalf("unregistered:\n got %s\nwant %s", got, want)
	}
	addr := kvwire.RankAddress{RankIP: "10.0.0.3", RankPort: 41000}
	if got, want := string(addr.MarshalPython()), `{"rank_ip": "10.0.0.3", "rank_port": 41000}`; got != want {
		t.Fatalf("address: got %s want %s", got, want)
	}
	if got, want := addr.Endpoint(), "tcp://10.0.0.3:41000"; got != want {
		t.Fatalf("endpoint %s", got)
	}
	if got, want := kvwire.RankAddressQuery(3, 1), "engine_rank=3&target_dp_group=1"; got != want {
		t.Fatalf("query %s", got)
	}
}

func TestDecodeParallelInfo(t *testing.T) {
	good := []struct {
		name string
		body string
		want ParallelInfo
	}{
		{"python bytes", `{"prefill_tp_size": 8, "prefill_dp_size": 2, "enable_mla_l1_5_cache": false, "kv_item_lens": [2048], "kv_unit_lens": [256], "state_item_lens": [], "state_unit_lens": []}`,
			ParallelInfo{PrefillTPSize: 8, PrefillDPSize: 2, EnableMLAL15Cache: false, BufferLens: BufferLens{KVItemLens: []int64{2048}, KVUnitLens: []int64{256}, StateItemLens: []int64{}, StateUnitLens: []int64{}}}},
		{"lists absent", `{"prefill_tp_size":4,"prefill_dp_size":1,"enable_mla_l1_5_cache":true}`, ParallelInfo{PrefillTPSize: 4, PrefillDPSize: 1, EnableMLAL15Cache: true}},
		{"lists null", `{"prefill_tp_size":4,"prefill_dp_size":1,"enable_mla_l1_5_cache":false,"kv_item_lens":null}`, ParallelInfo{PrefillTPSize: 4, PrefillDPSize: 1}},
	}
	for _, c := range good {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeParallelInfo([]byte(c.body))
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	bad := []struct {
		name, body string
		reason     kvwire.Reason
		field      string
	}{
		{"garbage", `<html>oops</html>`, kvwire.ReasonMalformedJSON, ""},
		{"empty", ``, kvwire.ReasonMalformedJSON, ""},
		{"list", `[1,2]`, kvwire.ReasonMalformedJSON, ""},
		{"null", `null`, kvwire.ReasonMalformedJSON, ""},
		{"unregistered", `{"prefill_tp_size": null, "prefill_dp_size": null, "enable_mla_l1_5_cache": false}`, kvwire.ReasonMissingField, "prefill_tp_size"},
		{"no mla key", `{"prefill_tp_size": 8, "prefill_dp_size": 1}`, kvwire.ReasonMissingField, "enable_mla_l1_5_cache"},
		{"tp string", `{"prefill_tp_size": "8", "prefill_dp_size": 1, "enable_mla_l1_5_cache": false}`, kvwire.ReasonMalformedJSON, "prefill_tp_size"},
		{"tp float", `{"prefill_tp_size": 8.5, "prefill_dp_size": 1, "enable_mla_l1_5_cache": false}`, kvwire.ReasonMalformedJSON, "prefill_tp_size"},
		{"tp zero", `{"prefill_tp_size": 0, "prefill_dp_size": 1, "enable_mla_l1_5_cache": false}`, kvwire.ReasonOutOfRange, "prefill_tp_size"},
		{"dp not dividing", `{"prefill_tp_size": 8, "prefill_dp_size": 3, "enable_mla_l1_5_cache": false}`, kvwire.ReasonInvalidValue, "prefill_dp_size"},
		{"dp above tp", `{"prefill_tp_size": 2, "prefill_dp_size": 4, "enable_mla_l1_5_cache": false}`, kvwire.ReasonOutOfRange, "prefill_dp_size"},
		{"item zero", `{"prefill_tp_size": 2, "prefill_dp_size": 1, "enable_mla_l1_5_cache": false, "kv_item_lens": [0]}`, kvwire.ReasonOutOfRange, "kv_item_lens"},
		{"units unpaired", `{"prefill_tp_size": 2, "prefill_dp_size": 1, "enable_mla_l1_5_cache": false, "kv_item_lens": [8, 8], "kv_unit_lens": [1]}`, kvwire.ReasonInvalidValue, "kv_unit_lens"},
		{"mla not bool", `{"prefill_tp_size": 2, "prefill_dp_size": 1, "enable_mla_l1_5_cache": 1}`, kvwire.ReasonMalformedJSON, "enable_mla_l1_5_cache"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeParallelInfo([]byte(c.body))
			wantReason(t, err, c.reason, -1)
			if e := (*kvwire.Error)(nil); !errors.As(err, &e) || e.Field != c.field {
				t.Fatalf("field %q, want %q (%v)", e.Field, c.field, err)
			}
		})
	}
}

func TestDecodeRankRegistration(t *testing.T) {
	reg := RankRegistration{Role: kvwire.RolePrefill, WorldSize: 8, DPSize: 2, RankIP: "10.0.0.3", RankPort: 41000, EngineRank: 5,
		BufferLens: BufferLens{KVItemLens: []int64{2048}, KVUnitLens: []int64{256}, StateItemLens: []int64{}, StateUnitLens: []int64{}}}
	got, err := DecodeRankRegistration(reg.MarshalPython())
	if err != nil || !reflect.DeepEqual(got, reg) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if got.TPPerDPGroup() != 4 {
		t.Fatalf("tp per dp group %d", got.TPPerDPGroup())
	}
	bad := []struct {
		name, body string
		reason     kvwire.Reason
		field      string
	}{
		{"no mla key", `{"role":"Prefill","world_size":8,"dp_size":1,"rank_ip":"h","rank_port":1,"engine_rank":0}`, kvwire.ReasonMissingField, "enable_mla_l1_5_cache"},
		{"rank beyond world", `{"role":"Prefill","world_size":8,"dp_size":1,"rank_ip":"h","rank_port":1,"engine_rank":8,"enable_mla_l1_5_cache":false}`, kvwire.ReasonOutOfRange, "engine_rank"},
		{"empty role", `{"role":"","world_size":8,"dp_size":1,"rank_ip":"h","rank_port":1,"engine_rank":0,"enable_mla_l1_5_cache":false}`, kvwire.ReasonInvalidValue, "role"},
		{"port string", `{"role":"Prefill","world_size":8,"dp_size":1,"rank_ip":"h","rank_port":"1","engine_rank":0,"enable_mla_l1_5_cache":false}`, kvwire.ReasonMalformedJSON, "rank_port"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRankRegistration([]byte(c.body))
			wantReason(t, err, c.reason, -1)
			if e := (*kvwire.Error)(nil); !errors.As(err, &e) || e.Field != c.field {
				t.Fatalf("field %q, want %q (%v)", e.Field, c.field, err)
			}
		})
	}
}

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

// Every decoder of untrusted bytes has a fuzzer. Each checks that the decoder
// never panics, that every failure is a *kvwire.Error with a reason, and
// that whatever it accepts survives encode → decode unchanged.

func wantTypedError(t *testing.T, err error) {
	t.Helper()
	var e *kvwire.Error
	if !errors.As(err, &e) || e.Reason == "" {
		t.Fatalf("untyped error %v (%T)", err, err)
	}
}

func FuzzDecodeRegistration(f *testing.F) {
	g := newGen(11)
	for range 8 {
		r := g.registration()
		f.Add(joinFrames(r.Frames()))
	}
	f.Add(joinFrames(frames("None", "h", "1", "h:1", "1234567", "", "", "")))
	f.Add(joinFrames(frames("None", "h", "1", "h:1", "", "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := DecodeRegistration(splitFrames(data))
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if err := reg.Validate(); err != nil {
			t.Fatalf("decoded registration fails Validate: %v", err)
		}
		again, err := DecodeRegistration(reg.Frames())
		if err != nil || !reflect.DeepEqual(again, reg) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, reg)
		}
	})
}

func FuzzDecodeRequest(f *testing.F) {
	g := newGen(12)
	for range 12 {
		q := g.request()
		f.Add(joinFrames(q.Frames()))
	}
	q := sampleRequest()
	f.Add(joinFrames(q.Frames()))
	f.Add(joinFrames(frames("1", "h", "1", "h:1", "", "", "1", "", "", "", "", "")))
	f.Fuzz(func(t *testing.T, data []byte) {
		q, err := DecodeRequest(splitFrames(data))
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if err := q.Validate(); err != nil {
			t.Fatalf("decoded request fails Validate: %v", err)
		}
		again, err := DecodeRequest(q.Frames())
		if err != nil || !reflect.DeepEqual(again, q) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, q)
		}
	})
}

func FuzzDecodeParallelInfo(f *testing.F) {
	f.Add([]byte(`{"prefill_tp_size": 8, "prefill_dp_size": 2, "enable_mla_l1_5_cache": false, "kv_item_lens": [2048], "kv_unit_lens": [256], "state_item_lens": [], "state_unit_lens": []}`))
	f.Add([]byte(`{"prefill_tp_size": null, "prefill_dp_size": null, "enable_mla_l1_5_cache": false}`))
	f.Add([]byte(`{"prefill_tp_size":4,"prefill_dp_size":1,"enable_mla_l1_5_cache":true}`))
	f.Add([]byte(`Missing inputs for bootstrap server.`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := DecodeParallelInfo(body)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if p.PrefillTPSize < 1 || p.PrefillDPSize < 1 || p.PrefillTPSize%p.PrefillDPSize != 0 {
			t.Fatalf("accepted impossible sizes %+v", p)
		}
		again, err := DecodeParallelInfo(p.MarshalPython())
		if err != nil || !sameParallelInfo(again, p) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, p)
		}
	})
}

// sameParallelInfo compares treating nil and empty lists alike: the Python
// encoding writes [] for both.
func sameParallelInfo(a, b ParallelInfo) bool {
	norm := func(l *BufferLens) {
		for _, p := range []*[]int64{&l.KVItemLens, &l.KVUnitLens, &l.StateItemLens, &l.StateUnitLens} {
			if len(*p) == 0 {
				*p = nil
			}
		}
	}
	norm(&a.BufferLens)
	norm(&b.BufferLens)
	return reflect.DeepEqual(a, b)
}

func FuzzDecodeRankRegistration(f *testing.F) {
	reg := RankRegistration{Role: kvwire.RolePrefill, WorldSize: 8, DPSize: 2, RankIP: "10.0.0.3", RankPort: 41000, EngineRank: 5,
		BufferLens: BufferLens{KVItemLens: []int64{2048}, KVUnitLens: []int64{256}}}
	f.Add(reg.MarshalPython())
	f.Add([]byte(`{"role":"Prefill","world_size":8,"dp_size":1,"rank_ip":"h","rank_port":1,"engine_rank":0}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeRankRegistration(body)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		again, err := DecodeRankRegistration(r.MarshalPython())
		if err != nil || !sameParallelInfo(ParallelInfo{BufferLens: again.BufferLens}, ParallelInfo{BufferLens: r.BufferLens}) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, r)
		}
		again.BufferLens, r.BufferLens = BufferLens{}, BufferLens{}
		if !reflect.DeepEqual(again, r) {
			t.Fatalf("re-decode: %+v; want %+v", again, r)
		}
	})
}

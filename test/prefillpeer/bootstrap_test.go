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

package prefillpeer

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
)

func TestBootstrapRoutes(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 4, DPSize: 2, Buffers: p2Buffers})
	base := "http://" + p.BootstrapAddr()

	code, body, hdr := get(t, base+"/route?engine_rank=-1&target_dp_group=-1")
	want := `{"prefill_tp_size": 4, "prefill_dp_size": 2, "enable_mla_l1_5_cache": false, "kv_item_lens": [2048, 2048], "kv_unit_lens": [256, 256], "state_item_lens": [], "state_unit_lens": []}`
	if code != 200 || body != want || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("parallel info: %d %s %q", code, body, hdr.Get("Content-Type"))
	}

	// TP rank 1 of dp group 1 is engine rank 3.
	code, body, _ = get(t, base+"/route?"+kvwire.RankAddressQuery(1, 1))
	if want := fmt.Sprintf(`{"rank_ip": "127.0.0.1", "rank_port": %d}`, p.Rank(3).Port); code != 200 || body != want {
		t.Fatalf("rank address: %d %s, want %s", code, body, want)
	}
	if r := p.RankOf(1, 1); r.EngineRank != 3 || r.DPGroup != 1 || r.TPRank != 1 {
		t.Fatalf("RankOf(1, 1) = engine %d group %d tp %d", r.EngineRank, r.DPGroup, r.TPRank)
	}

	cases := []struct {
		name, method, path string
		code               int
		body               string
	}{
		{"no params", "GET", "/route", 400, "Missing inputs for bootstrap server."},
		{"no dp group", "GET", "/route?engine_rank=0", 400, "Missing inputs for bootstrap server."},
		{"empty engine rank", "GET", "/route?engine_rank=&target_dp_group=0", 400, "Missing inputs for bootstrap server."},
		{"unknown rank", "GET", "/route?engine_rank=2&target_dp_group=0", 500, ""},
		{"unknown group", "GET", "/route?engine_rank=0&target_dp_group=5", 500, ""},
		{"only rank -1", "GET", "/route?engine_rank=-1&target_dp_group=0", 500, ""},
		{"not a number", "GET", "/route?engine_rank=x&target_dp_group=0", 500, ""},
		{"post", "POST", "/route", 405, "Method not allowed"},
		{"health", "GET", "/health", 200, "OK"},
		{"garbage put", "PUT", "/route", 500, ""},
	}
	// Another role is acknowledged but not filed, as in the reference.
	decodeReg := kvv1.RankRegistration{Role: "Decode", WorldSize: 4, DPSize: 2, RankIP: "127.0.0.1", RankPort: 9, EngineRank: 0, BufferLens: p2Buffers}
	if code, _, _ := do(t, "PUT", base+"/route", strings.NewReader(string(decodeReg.MarshalPython()))); code != 200 {
		t.Fatalf("decode-role PUT: %d", code)
	}
	if _, body, _ := get(t, base+"/route?"+kvwire.RankAddressQuery(0, 0)); body != fmt.Sprintf(`{"rank_ip": "127.0.0.1", "rank_port": %d}`, p.Rank(0).Port) {
		t.Fatalf("a decode-role PUT replaced prefill rank 0: %s", body)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := do(t, c.method, base+c.path, strings.NewReader("{not json"))
			if code != c.code || (c.body != "" && body != c.body) {
				t.Fatalf("%s %s: %d %q, want %d %q", c.method, c.path, code, body, c.code, c.body)
			}
		})
	}
	got := p.BootstrapCounts()
	if got.Puts != 5 || got.ParallelInfo != 1 || got.RankAddress != 5 || got.Health != 1 || got.Bad != 5 {
		t.Fatalf("counts %+v", got)
	}
}

func TestBootstrapBeforeRanksRegister(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 2, Buffers: p2Buffers, DeferRegistration: true})
	base := "http://" + p.BootstrapAddr()
	// The reference answers null sizes until a rank registers; decoders must refuse them.
	_, body, _ := get(t, base+"/route?"+kvwire.ParallelInfoQuery)
	if _, err := kvv1.DecodeParallelInfo([]byte(body)); kvwire.ReasonOf(err) != kvwire.ReasonMissingField {
		t.Fatalf("unregistered parallel info %s decodes with %v", body, err)
	}
	if code, _, _ := get(t, base+"/route?"+kvwire.RankAddressQuery(0, 0)); code != 500 {
		t.Fatalf("unregistered rank address: %d", code)
	}
	if err := p.RegisterRanks(); err != nil {
		t.Fatal(err)
	}
	_, body, _ = get(t, base+"/route?"+kvwire.ParallelInfoQuery)
	info, err := kvv1.DecodeParallelInfo([]byte(body))
	if err != nil || info.PrefillTPSize != 2 || info.PrefillDPSize != 1 {
		t.Fatalf("after registration: %+v %v", info, err)
	}
}

func TestBootstrapFaults(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 1})
	base := "http://" + p.BootstrapAddr()

	p.SetBootstrapFault(BootstrapFault{ParallelInfo: Fault500, RankAddress: FaultGarbage, Health: Fault500})
	if code, _, _ := get(t, base+"/route?"+kvwire.ParallelInfoQuery); code != 500 {
		t.Fatalf("parallel info: %d", code)
	}
	code, body, _ := get(t, base+"/route?"+kvwire.RankAddressQuery(0, 0))
	if _, err := kvwire.DecodeRankAddress([]byte(body)); code != 200 || kvwire.ReasonOf(err) != kvwire.ReasonMalformedJSON {
		t.Fatalf("garbage address: %d %s %v", code, body, err)
	}
	if code, _, _ := get(t, base+"/health"); code != 500 {
		t.Fatalf("health: %d", code)
	}

	// A hanging endpoint is ended by the client's timeout.
	p.SetBootstrapFault(BootstrapFault{ParallelInfo: FaultHang})
	client := &http.Client{Timeout: 150 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now() // a measure of how long one request hung, not a wait
	if _, err := client.Get(base + "/route?" + kvwire.ParallelInfoQuery); err == nil || time.Since(start) < 150*time.Millisecond {
		t.Fatalf("hang: %v after %v", err, time.Since(start))
	}
	// A hanging request in flight when the peer dies does not outlive it.
	go func() { _, _ = client.Get(base + "/route?" + kvwire.ParallelInfoQuery) }()

	p.SetBootstrapFault(BootstrapFault{})
	if code, body, _ := get(t, base+"/health"); code != 200 || body != "OK" {
		t.Fatalf("health after clearing faults: %d %s", code, body)
	}
}

func TestDeathStopsBootstrap(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 2})
	base := "http://" + p.BootstrapAddr()
	p.Die()
	select {
	case <-p.Dead():
	default:
		t.Fatal("Dead not closed after Die")
	}
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get(base + "/health"); err == nil {
		resp.Body.Close()
		t.Fatalf("health still answers after death: %s", resp.Status)
	}
	p.Die() // idempotent
}

func TestStartRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{WorldSize: 0},
		{WorldSize: 4, DPSize: 3},
		{WorldSize: 2, RankBuffers: map[int]kvv1.BufferLens{2: {}}},
		{WorldSize: 2, Buffers: kvv1.BufferLens{KVItemLens: []int64{0}}},
	} {
		if p, err := Start(cfg); err == nil {
			_ = p.Close()
			t.Errorf("Start(%+v) succeeded", cfg)
		}
	}
}

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
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/engine"
	sglang "github.com/pdtopo/pdtopo/pkg/engine/sglang"
)

// liveServer is liveserver.py: SGLang's own bootstrap server on loopback.
type liveServer struct {
	in  *json.Encoder
	out *bufio.Scanner
}

func startLiveServer(t *testing.T, src string) *liveServer {
	t.Helper()
	python := os.Getenv("PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	cmd := exec.Command(python, "liveserver.py", "--sglang", src)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	return &liveServer{in: json.NewEncoder(stdin), out: bufio.NewScanner(stdout)}
}

func (s *liveServer) do(t *testing.T, cmd map[string]any, answer any) {
	t.Helper()
	if err := s.in.Encode(cmd); err != nil {
		t.Fatal(err)
	}
	if !s.out.Scan() {
		t.Fatalf("liveserver.py ended: %v", s.out.Err())
	}
	if err := json.Unmarshal(s.out.Bytes(), answer); err != nil {
		t.Fatalf("liveserver.py answered %q: %v", s.out.Text(), err)
	}
}

// pdtopo's live read (the operator's client, SGLang's query, its decoder)
// against SGLang's own bootstrap server over HTTP, at the commit of
// reference.env: 503 before the prefill ranks register (a fixed outcome),
// then each layout's answer decodes to that layout and matches its spec,
// and a spec of another page size and dtype differs in exactly those.
// Local, like every check here: set SGLANG_SRC to a tree holding python/
// at SGLANG_COMMIT (conformance/sglang/README.md).
func TestLiveReadOfSGLangsBootstrapServer(t *testing.T) {
	src := os.Getenv("SGLANG_SRC")
	if src == "" {
		t.Skip("SGLANG_SRC is not set: this check runs SGLang's own bootstrap server from its source")
	}
	srv := startLiveServer(t, src)
	eng := sglang.New()
	query, limit := eng.LivePrefillQuery()
	client := livecontract.NewClient(0)
	layouts := []struct {
		tp, dp, pp, page int
		dtype            string
	}{
		{4, 1, 1, 16, "auto"},
		{8, 2, 1, 64, "fp8_e4m3"},
		{4, 1, 2, 32, "bfloat16"},
		{16, 4, 1, 1, "fp8_e5m2"},
	}
	for _, l := range layouts {
		var served struct{ Addr string }
		srv.do(t, map[string]any{"op": "serve"}, &served)
		_, _, err := client.EngineAnswer(context.Background(), served.Addr, query, limit)
		if livecontract.ReasonOf(err) != livecontract.ReasonHTTPStatus || livecontract.StatusOf(err) == "" {
			t.Fatalf("%+v before registration: %v, want HTTPStatus (503)", l, err)
		}
		t.Logf("before registration: %s", livecontract.StatusOf(err))
		var reg struct{ Registered int }
		srv.do(t, map[string]any{"op": "register", "addr": served.Addr,
			"layout": map[string]any{"tp": l.tp, "dp": l.dp, "pp": l.pp, "pageSize": l.page, "kvCacheDtype": l.dtype}}, &reg)
		body, url, err := client.EngineAnswer(context.Background(), served.Addr, query, limit)
		if err != nil {
			t.Fatalf("%+v: %v", l, err)
		}
		got, err := eng.DecodeLivePrefill(body)
		if err != nil {
			t.Fatalf("%+v: %s answered %s: %v", l, url, body, err)
		}
		want := engine.LivePrefill{AttentionTP: l.tp / l.dp, DP: l.dp, PP: l.pp, CP: 1, PageSize: l.page, KVCacheDtype: l.dtype}
		if got != want {
			t.Fatalf("%+v: decoded %+v from %s, want %+v", l, got, body, want)
		}
		spec := pdv1.PDPairSpec{Prefill: pdv1.FleetLayout{TensorParallelSize: int32(l.tp), DataParallelSize: ptr.To(int32(l.dp)),
			PipelineParallelSize: ptr.To(int32(l.pp)), TokensPerPage: ptr.To(int32(l.page)), KVCacheDtype: pdv1.KVCacheDtype(l.dtype)}}
		if c := eng.CompareLivePrefill(spec, got); c.Differences != nil {
			t.Fatalf("%+v: SGLang's answer differs from its own spec: %+v", l, c.Differences)
		}
		spec.Prefill.TokensPerPage, spec.Prefill.KVCacheDtype = ptr.To(int32(l.page*2)), "float16"
		names := []string{}
		for _, d := range eng.CompareLivePrefill(spec, got).Differences {
			names = append(names, d.Name)
		}
		if !reflect.DeepEqual(names, []string{"page_size", "kv_cache_dtype"}) {
			t.Fatalf("%+v: another page size and dtype differ in %v", l, names)
		}
		t.Logf("%d ranks registered; %s answered %d bytes: %s", reg.Registered, url, len(body), body)
	}
}

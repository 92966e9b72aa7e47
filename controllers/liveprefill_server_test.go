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

package controllers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// sglangPrefill is a bootstrap server on loopback that answers as SGLang's
// CommonKVBootstrapServer (python/sglang/srt/disaggregation/common/conn.py
// at the commit of conformance/sglang/reference.env) does: _handle_route_get
// answers GET /route with every rank -1 by
// web.json_response(dataclasses.asdict(PrefillServerInfo(...))), json.dumps
// with its default separators and the dataclass's fields in order, or 503
// "Prefill server not fully registered yet (N workers registered)." until
// every rank registered; 400 when a parameter is missing;
// _handle_health_check answers "OK".
type sglangPrefill struct {
	srv *httptest.Server
	// asked counts the requests served.
	asked atomic.Int64

	mu sync.Mutex
	// answer is the body served; "" answers 503.
	answer string
}

func newSGLangPrefill(t *testing.T, answer string) *sglangPrefill {
	t.Helper()
	p := &sglangPrefill{answer: answer}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

// Addr is the server's HOST:PORT, a bootstrap address.
func (p *sglangPrefill) Addr() string { return strings.TrimPrefix(p.srv.URL, "http://") }

func (p *sglangPrefill) set(answer string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answer = answer
}

func (p *sglangPrefill) serve(w http.ResponseWriter, r *http.Request) {
	p.asked.Add(1)
	if r.URL.Path == "/health" {
		_, _ = w.Write([]byte("OK"))
		return
	}
	q := r.URL.Query()
	for _, k := range []string{"prefill_dp_rank", "prefill_cp_rank", "target_tp_rank", "target_pp_rank"} {
		if q.Get(k) == "" {
			http.Error(w, "Missing inputs for bootstrap server.", http.StatusBadRequest)
			return
		}
		if q.Get(k) != "-1" {
			http.Error(w, "this test server answers the parallel info only", http.StatusNotFound)
			return
		}
	}
	p.mu.Lock()
	answer := p.answer
	p.mu.Unlock()
	if answer == "" {
		http.Error(w, "Prefill server not fully registered yet (3 workers registered).", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write([]byte(answer))
}

// prefillInfo is the parallel info of a prefill as SGLang's server sends it.
type prefillInfo struct {
	attnTP, cp, dp, pp, page int
	dtype                    string
}

func (i prefillInfo) answer() string {
	return fmt.Sprintf(`{"attn_tp_size": %d, "attn_cp_size": %d, "dp_size": %d, "pp_size": %d, "page_size": %d, "kv_cache_dtype": %q, `+
		`"follow_bootstrap_room": true, "enable_dsa_cache_layer_split": false, "prefill_http_port": 30000, "target_tp_rank": null, `+
		`"target_tp_ranks": null, "target_cp_ranks": null, "target_pp_ranks": null, "required_dst_info_num": null, "required_prefill_response_num": null}`,
		i.attnTP, i.cp, i.dp, i.pp, i.page, i.dtype)
}

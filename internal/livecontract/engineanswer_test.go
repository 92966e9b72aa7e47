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

package livecontract_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/internal/livecontract"
)

// An engine's answer is read under the client's bounds: the body of a 200
// within the limit; a longer one, another status, a redirect and a bad
// address are *Errors with their reason, the URL asked and the numbers.
func TestEngineAnswer(t *testing.T) {
	const query = "/route?prefill_dp_rank=-1&prefill_cp_rank=-1&target_tp_rank=-1&target_pp_rank=-1"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.RequestURI() != query:
			http.Error(w, "Missing inputs for bootstrap server.", http.StatusBadRequest)
		case strings.HasPrefix(r.Host, "localhost"):
			w.Header().Set("Location", "http://127.0.0.1:1"+query)
			w.WriteHeader(http.StatusFound)
		default:
			_, _ = w.Write([]byte(`{"attn_tp_size": 4}`))
		}
	}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	client := livecontract.NewClient(0)

	body, url, err := client.EngineAnswer(t.Context(), addr, query, 64)
	if err != nil || string(body) != `{"attn_tp_size": 4}` || url != "http://"+addr+query {
		t.Fatalf("EngineAnswer = %q, %s, %v", body, url, err)
	}
	cases := []struct {
		name, addr, query string
		limit             int64
		reason            livecontract.Reason
		says              string
	}{
		{"past the limit", addr, query, 8, livecontract.ReasonTooLarge, "longer than 8 bytes"},
		{"another status", addr, "/route", 64, livecontract.ReasonHTTPStatus, "HTTP 400"},
		{"a redirect", strings.Replace(addr, "127.0.0.1", "localhost", 1), query, 64, livecontract.ReasonHTTPStatus, "HTTP 302"},
		{"no port", "prefill.llm.svc", query, 64, livecontract.ReasonBadAddress, "the bootstrap address"},
	}
	for _, c := range cases {
		_, url, err := client.EngineAnswer(t.Context(), c.addr, c.query, c.limit)
		if livecontract.ReasonOf(err) != c.reason || !strings.Contains(livecontract.StatusOf(err), c.says) || url != "http://"+c.addr+c.query {
			t.Errorf("%s: %v (%s), want %s saying %q", c.name, err, url, c.reason, c.says)
		}
	}
}

// Malformed says the size and the reader's words; what the answer holds
// is in its Detail only.
func TestMalformedQuotesOnlyInDetail(t *testing.T) {
	body := []byte(`{"<hostile>": 1}`)
	err := livecontract.Malformed("http://a:1/route", body, "is not the engine's parallel info: UnknownKey", `key "<hostile>"`)
	if err.Reason != livecontract.ReasonMalformed || strings.Contains(err.Status(), "hostile") ||
		!strings.Contains(err.Status(), "the answer (16 bytes) is not the engine's parallel info: UnknownKey") || !strings.Contains(err.Error(), "<hostile>") {
		t.Fatalf("status %q, error %q", err.Status(), err.Error())
	}
}

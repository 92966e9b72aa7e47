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
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// hostileServer serves h on loopback and returns its HOST:PORT.
func hostileServer(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}

// Bootstrap servers that are not SGLang's: a 64 MiB stream, a silent
// listener, one that drips its answer past the timeout, a redirect to a
// real prefill, "OK", and answers shaped like SGLang's with a hostile key
// or dtype. Each is a fixed outcome in LivePrefillMatches=Unknown, quoting
// nothing it sent; none changes the verdict or Ready; the redirect is not
// followed and the stream is not read past the cap.
func TestLivePrefillHostileServers(t *testing.T) {
	ns := newNamespace(t)
	hostile := strings.Repeat("hostile-", 40)
	// streamed is the most one request of the stream wrote before the
	// reader hung up (what the kernel buffered, not what was read).
	var streamed atomic.Int64
	good := newSGLangPrefill(t, specPrefill.answer())
	servers := map[string]struct {
		addr string
		says []string
	}{
		"stream": {hostileServer(t, func(w http.ResponseWriter, _ *http.Request) {
			chunk := []byte(strings.Repeat(hostile, 128))
			var wrote int64
			defer func() {
				for old := streamed.Load(); wrote > old && !streamed.CompareAndSwap(old, wrote); old = streamed.Load() {
				}
			}()
			for wrote < 64<<20 {
				n, err := w.Write(chunk)
				wrote += int64(n)
				if err != nil {
					return
				}
			}
		}), []string{"TooLarge", "longer than 4096 bytes"}},
		"silent": {fixtures.SilentListener(t).Addr(), []string{"Unreachable"}},
		"drip": {hostileServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			for i := 0; i < 100; i++ {
				if _, err := w.Write([]byte("{")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				select {
				case <-time.After(100 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
		}), []string{"Unreachable"}},
		"redirect": {hostileServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://"+good.Addr()+r.URL.RequestURI(), http.StatusFound)
		}), []string{"HTTPStatus: HTTP 302"}},
		"ok": {hostileServer(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("OK")) }),
			[]string{"Malformed: the answer (2 bytes) is not the engine's parallel info: NotAnObject"}},
		"key": {hostileServer(t, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Replace(specPrefill.answer(), `"pp_size"`, `"`+hostile+`": 1, "pp_size"`, 1)))
		}), []string{"Malformed", "UnknownKey"}},
		"dtype": {hostileServer(t, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(strings.Replace(specPrefill.answer(), `"bfloat16"`, `"`+hostile+`"`, 1)))
		}), []string{"Malformed", "NotADtype kv_cache_dtype"}},
	}
	for name, s := range servers {
		create(t, sglangLivePair(ns, name, s.addr))
	}
	for name, s := range servers {
		t.Run(name, func(t *testing.T) {
			pair := &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			got := waitLive(t, pair, metav1.ConditionUnknown, pdv1.ReasonLivePrefillNotRead, s.says...)
			wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
			wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
			for _, c := range got.Status.Conditions {
				checkQuotes(t, name+" condition "+c.Type, c.Message, hostile)
			}
			checkQuotes(t, name+" status.livePrefill", got.Status.LivePrefill.Message, hostile)
			if got.Status.LivePrefill.ObservedAt != nil || got.Status.LivePrefill.KVCacheDtype != "" {
				t.Errorf("status.livePrefill holds a read: %+v", got.Status.LivePrefill)
			}
		})
	}
	if n := good.asked.Load(); n != 0 {
		t.Errorf("the redirect was followed: the prefill it points at was asked %d times", n)
	}
	if n := streamed.Load(); n >= 64<<20 {
		t.Errorf("the stream was read to its end (%d bytes)", n)
	} else {
		t.Logf("one request of the 64 MiB stream wrote at most %d bytes (socket buffers) before the reader hung up", n)
	}
}

// SGLang pairs' reads take the slots of live contract reads, fairly: 24 of
// them in one namespace at addresses that never answer hold at most their
// share, and another namespace's contract is read within 5 s. A pair at an
// address outside --bootstrap-address-allowlist is NotAllowed, nothing
// sent, and its verdict is the spec's.
func TestLivePrefillReadsShareTheSlots(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	hostile := newNamespace(t)
	silent := fixtures.SilentListener(t)
	for i := range hostilePairs {
		create(t, sglangLivePair(hostile, fmt.Sprintf("silent-%d", i), silent.Addr()))
	}
	testutil.Eventually(t, settle, "the hostile reads to hold connections", func() error {
		if silent.Open() < liveReadSlots-liveReadSlots/4 {
			return fmt.Errorf("%d open", silent.Open())
		}
		return nil
	})
	if n := silent.Open(); n > liveReadSlots-liveReadSlots/4 {
		t.Errorf("one namespace's SGLang pairs hold %d read slots of %d", n, liveReadSlots)
	}
	d := victimRead(t, v)
	t.Logf("victim contract read after %s beside %d silent SGLang prefills", d.Round(time.Millisecond), hostilePairs)
	if d > victimReadBound {
		t.Errorf("the victim's read took %s, bound %s", d, victimReadBound)
	}

	outside := sglangLivePair(hostile, "outside", "192.0.2.7:8998")
	create(t, outside)
	got := waitLive(t, outside, metav1.ConditionUnknown, pdv1.ReasonLivePrefillNotRead, "NotAllowed", "--bootstrap-address-allowlist")
	wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
}

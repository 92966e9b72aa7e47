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

package receiver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A bootstrap server that redirects (to a server that would answer) makes
// a failed call naming its status; the redirect's target is never asked,
// with the agent's own client or with a caller's that follows redirects.
func TestBootstrapClientFollowsNoRedirect(t *testing.T) {
	var reached atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte(`{}`))
	}))
	defer target.Close()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.RequestURI(), code)
		}))
		addr := strings.TrimPrefix(redirecting.URL, "http://")
		for name, c := range map[string]*http.Client{"own client": nil, "caller's client": {}} {
			boot := newBootstrapClient(c, 2*time.Second)
			want := fmt.Sprintf("bootstrap server answered %d %s", code, http.StatusText(code))
			if err := boot.health(context.Background(), addr); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "redirects are not followed") {
				t.Errorf("%d, %s: health: %v, want %q", code, name, err, want)
			}
			if _, err := boot.bootstrapAnswer(context.Background(), addr); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%d, %s: parallel info: %v, want %q", code, name, err, want)
			}
			if c != nil && c.CheckRedirect != nil {
				t.Errorf("the caller's client was changed")
			}
		}
		redirecting.Close()
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the redirect target was asked %d times", n)
	}
}

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

package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// sameHashSource serves one current plan hash; only whether the other plan
// sets were refused changes between versions, as when plansets.json is
// replaced by a forgery while index.json stays.
type sameHashSource struct {
	mu      sync.Mutex
	version string
	refused error
}

func (s *sameHashSource) Describe() string { return "test source" }

func (s *sameHashSource) Version(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version, nil
}

func (s *sameHashSource) Load(context.Context) (plansource.Plans, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return plansource.Plans{PDPair: "pair", Hash: "h1", SetsRefused: s.refused}, nil
}

func (s *sameHashSource) set(version string, refused error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version, s.refused = version, refused
}

// syncBuffer is a log sink the follower's goroutine writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A publication whose other plan sets are refused (here a bad signature on
// plansets.json) while its current set loads: /v1/agent says why, with the
// reason code, the gauge is 1 and a warning is logged once; the current
// plan hash stays in use. Fixed, all three clear.
func TestRefusedPlanSetsAreReported(t *testing.T) {
	reg := prometheus.NewRegistry()
	s := newPlanState(nil, nil, reg)
	var logs syncBuffer
	s.log = slog.New(slog.NewTextHandler(&logs, nil))
	s.hash = "h1"
	src := &sameHashSource{}
	src.set("v1", &planstore.FormatError{Reason: planstore.ReasonBadSignature, Message: "plansets.sig is not signed by a key this agent accepts"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &plansource.Follower{Source: src, Resync: 10 * time.Millisecond, Apply: s.apply, Report: s.report, Failed: s.failed, Sets: s.sets, Log: s.log}
	go f.Run(ctx, plansource.Loaded{Plans: plansource.Plans{Hash: "h1"}, Version: "v0"})

	waitFor(t, "the refusal reported", func() bool { return s.Info().PlanSetsRefused != nil })
	info := s.Info()
	if r := info.PlanSetsRefused; r.Reason != "BadSignature" || !strings.Contains(r.Message, "plansets.sig is not signed") || info.PlanHash != "h1" || info.PlanError != "" {
		t.Fatalf("/v1/agent: %+v (planSetsRefused %+v); want BadSignature with its message, plan h1 in use, no planError", info, info.PlanSetsRefused)
	}
	if g := testutil.ToFloat64(s.setsRefusal); g != 1 {
		t.Errorf("pdtopo_receiver_plan_sets_refused = %v, want 1", g)
	}
	if n := strings.Count(logs.String(), "other plan sets are refused"); n != 1 || !strings.Contains(logs.String(), "reason=BadSignature") {
		t.Errorf("want one warning naming BadSignature, got %d in %q", n, logs.String())
	}

	src.set("v2", nil)
	waitFor(t, "the refusal cleared", func() bool { return s.Info().PlanSetsRefused == nil })
	if g := testutil.ToFloat64(s.setsRefusal); g != 0 {
		t.Errorf("pdtopo_receiver_plan_sets_refused = %v after the sets loaded, want 0", g)
	}
	if !strings.Contains(logs.String(), "other plan sets load again") {
		t.Errorf("no log line says the sets load again: %q", logs.String())
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	err := poll.Until(5*time.Second, func() error {
		if !ok() {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

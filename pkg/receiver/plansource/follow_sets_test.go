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

package plansource

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// setsSource publishes one current set ("h1") beside earlier sets the
// test changes, each change a new version.
type setsSource struct {
	mu      sync.Mutex
	version int
	earlier []string
}

func (s *setsSource) Describe() string { return "sets source" }

func (s *setsSource) Version(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Repeat("v", s.version+1), nil
}

func (s *setsSource) Load(context.Context) (Plans, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := Plans{Hash: "h1", Ranks: []receiver.PlanSnapshot{{Hash: "h1"}}}
	for _, h := range s.earlier {
		p.Alternates = append(p.Alternates, []receiver.PlanSnapshot{{Hash: h}})
	}
	return p, nil
}

func (s *setsSource) publish(earlier ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	s.earlier = earlier
}

// The current set staying while the earlier ones change is installed: a
// refused plansets.json fixed brings the rollout's older set in, and a
// set dropped after its grace goes; a new version with the same sets
// installs nothing.
func TestFollowerInstallsEarlierSetsUnderTheSameCurrentSet(t *testing.T) {
	src := &setsSource{}
	var mu sync.Mutex
	var installed []string
	apply := func(p Plans) error {
		mu.Lock()
		defer mu.Unlock()
		installed = append(installed, setsOf(p))
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first, err := Load(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	f := &Follower{Source: src, Resync: 5 * time.Millisecond, Apply: apply, Report: func(error) {}, Log: slog.New(slog.DiscardHandler)}
	go f.Run(ctx, first)
	want := func(sets ...string) {
		t.Helper()
		testutil.Eventually(t, 5*time.Second, "the sets installed", func() error {
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(installed, sets) {
				return &mismatch{got: installed, want: sets}
			}
			return nil
		})
	}
	src.publish("h0")
	want("h1,h0")
	src.publish("h0") // a new version, the same sets
	src.publish()
	want("h1,h0", "h1")
	time.Sleep(50 * time.Millisecond) // some resyncs of the same content
	want("h1,h0", "h1")
}

type mismatch struct{ got, want []string }

func (m *mismatch) Error() string {
	return "installed " + strings.Join(m.got, " | ") + ", want " + strings.Join(m.want, " | ")
}

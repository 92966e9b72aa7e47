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
	"strings"
	"time"
)

// Follower keeps an agent on the current plans of a source. It re-reads
// the source when a Notifier says it changed, and every Resync as a safety
// net (or as the only trigger, for a source that cannot notify or whose
// watch could not be set up).
type Follower struct {
	Source Source
	// Resync is the interval of the safety-net re-read.
	Resync time.Duration
	// Apply installs new plans; an error refuses them (the plans in use are
	// kept, and the same content is not offered again).
	Apply func(Plans) error
	// Report is told after every read whether the source's current content
	// is what the agent runs (nil) or why not: unreadable, not loadable, or
	// refused. The plans in use are kept in every case.
	Report func(error)
	// Failed, if set, counts each failed read by stage: "read" (the source
	// or its plans could not be read) or "refused" (Apply refused them).
	Failed func(stage string)
	// Sets, if set, is told of every publication read, applied or not,
	// with Plans.SetsRefused: whether its other plan sets loaded can
	// change while the current set (and so the hash) stays.
	Sets func(Plans)
	Log  *slog.Logger
}

// Run follows the source until ctx ends. last is what the agent loaded at
// start (zero if nothing loaded).
func (f *Follower) Run(ctx context.Context, last Loaded) {
	trigger := make(chan struct{}, 1)
	changed := func() {
		select {
		case trigger <- struct{}{}:
		default: // a re-read is pending already; it will see this change too
		}
	}
	if n, ok := f.Source.(Notifier); ok {
		if err := n.Notify(ctx, changed); err != nil {
			f.Log.Warn("cannot watch the plan source; re-reading it every resync interval instead", "source", f.Source.Describe(), "resync", f.Resync, "error", err)
		}
	}
	changed() // what changed between the caller's load and the watch starting
	tick := time.NewTicker(f.Resync)
	defer tick.Stop()
	st := followState{version: last.Version, hash: last.Plans.Hash, sets: setsOf(last.Plans)}
	for {
		select {
		case <-ctx.Done():
			return
		case <-trigger:
		case <-tick.C:
		}
		f.step(ctx, &st)
	}
}

// followState is what the follower knows: the version it last examined
// (loaded or refused), the outcome of that examination, and the hash of
// the plans in use and of every plan set installed with them (setsOf).
type followState struct {
	version string
	outcome error
	hash    string
	sets    string
}

// setsOf names the plan sets of a publication, current first. The same
// current set with other earlier ones (a rollout's set dropped after its
// grace, or a refused plansets.json fixed) is new content to install,
// though the plan hash /v1/agent reports stays.
func setsOf(p Plans) string {
	var b strings.Builder
	b.WriteString(p.Hash)
	for _, alt := range p.Alternates {
		b.WriteByte(',')
		if len(alt) > 0 {
			b.WriteString(alt[0].Hash)
		}
	}
	return b.String()
}

func (f *Follower) step(ctx context.Context, st *followState) {
	v, err := f.Source.Version(ctx)
	switch {
	case err != nil:
		f.fail("read", err)
		f.Log.Warn("plan source unreadable; keeping the last good plan", "source", f.Source.Describe(), "hash", st.hash, "error", err)
		return
	case v == st.version:
		f.Report(st.outcome) // back to (or still at) content already examined
		return
	}
	next, err := Load(ctx, f.Source)
	if err != nil {
		f.fail("read", err)
		f.Log.Warn("plans do not load; keeping the last good plan", "source", f.Source.Describe(), "hash", st.hash, "error", err)
		return
	}
	st.version = next.Version
	if f.Sets != nil {
		f.Sets(next.Plans)
	}
	if setsOf(next.Plans) == st.sets {
		st.outcome = nil
		f.Report(nil)
		return
	}
	if err := f.Apply(next.Plans); err != nil {
		st.outcome = err // the same content would be refused again
		f.fail("refused", err)
		f.Log.Error("new plan refused; keeping the last good plan", "source", f.Source.Describe(), "hash", next.Plans.Hash, "kept", st.hash, "error", err)
		return
	}
	st.hash, st.sets, st.outcome = next.Plans.Hash, setsOf(next.Plans), nil
	f.Report(nil)
	f.Log.Info("route plan loaded", "source", f.Source.Describe(), "pdpair", next.Plans.PDPair, "hash", next.Plans.Hash, "sets", 1+len(next.Plans.Alternates))
}

func (f *Follower) fail(stage string, err error) {
	if f.Failed != nil {
		f.Failed(stage)
	}
	f.Report(err)
}

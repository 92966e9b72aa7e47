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
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
)

// Edits that never pause must not starve publication: a pair edited every
// editEvery (each edit a layout never used before, so a new plan hash) gets
// the plans of some recent generation published while the edits go on,
// within maxPublishGap of the first edit and of every publication before,
// and its status never goes back (observedGeneration never decreases, a
// plan hash once replaced never returns). The failover run of test/chaos
// saw no plan published until the edits stopped at this rate.
const (
	editEvery     = 800 * time.Millisecond
	editFor       = 10 * time.Second
	maxPublishGap = 6 * time.Second
)

func TestPublishesWhileEditsContinue(t *testing.T) {
	t.Parallel()
	ns := newNamespace(t)
	layers := func(edit int) int32 { return int32(8 + edit) }
	pair := fixtures.GQAPair(ns, "edited", 8, 4, layers(0), 512)
	create(t, pair)
	first := waitObserved(t, pair)
	wantCondition(t, first, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished)

	w := &publicationWatch{key: client.ObjectKeyFromObject(pair), last: first.Generation, hashes: []string{first.Status.Plan.Hash}}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { w.run(ctx, t) })
	start := time.Now()
	edits := 0
	for time.Since(start) < editFor {
		edits++
		updateSpec(t, pair, func(p *pdv1.PDPair) {
			for i := range p.Spec.KVBuffers {
				p.Spec.KVBuffers[i].Count = layers(edits)
			}
		})
		time.Sleep(editEvery)
	}
	stopped := time.Now()
	stop()
	wg.Wait()

	pubs, errs := w.result()
	for _, err := range errs {
		t.Error(err)
	}
	t.Logf("%d edits in %s; %d publications while they went on: %s", edits, stopped.Sub(start).Round(time.Millisecond), len(pubs), describePublications(pubs, start))
	if len(pubs) == 0 {
		t.Fatalf("no plan published for any of %d edits while they went on (an edit every %s for %s)", edits, editEvery, editFor)
	}
	prev := start
	for _, p := range append(pubs, publicationSeen{at: stopped}) {
		if gap := p.at.Sub(prev); gap > maxPublishGap {
			t.Errorf("%s without a publication (from +%s to +%s), bound %s", gap.Round(time.Millisecond),
				prev.Sub(start).Round(time.Millisecond), p.at.Sub(start).Round(time.Millisecond), maxPublishGap)
		}
		prev = p.at
	}
	last := waitObserved(t, pair)
	wantCondition(t, last, pdv1.PDPairPlansPublished, metav1.ConditionTrue, pdv1.ReasonPublished)
}

// publicationSeen is a plan the status said was published for a
// generation, when the watch first saw it.
type publicationSeen struct {
	generation int64
	hash       string
	at         time.Time
}

// publicationWatch polls a pair's status from the API server and records
// each new publication, and every step back.
type publicationWatch struct {
	key client.ObjectKey
	// last is the highest observedGeneration seen.
	last int64
	// hashes are the plan hashes published, in order, the pair's first
	// (before the edits) included.
	hashes []string

	mu   sync.Mutex
	pubs []publicationSeen
	errs []error
}

func (w *publicationWatch) run(ctx context.Context, t *testing.T) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		var p pdv1.PDPair
		if err := k8s.Get(ctx, w.key, &p); err != nil {
			if ctx.Err() == nil {
				t.Logf("reading %s: %v", w.key, err)
			}
			continue
		}
		w.see(&p)
	}
}

func (w *publicationWatch) see(p *pdv1.PDPair) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if g := p.Status.ObservedGeneration; g < w.last {
		w.errs = append(w.errs, fmt.Errorf("status.observedGeneration went back from %d to %d", w.last, g))
	} else {
		w.last = g
	}
	c := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairPlansPublished))
	if c == nil || c.Status != metav1.ConditionTrue || p.Status.Plan == nil {
		return
	}
	h := p.Status.Plan.Hash
	if n := len(w.hashes); n > 0 && w.hashes[n-1] == h {
		return
	}
	if slices.Contains(w.hashes, h) {
		w.errs = append(w.errs, fmt.Errorf("plan %s published again after %s replaced it", h, w.hashes[len(w.hashes)-1]))
	}
	w.hashes = append(w.hashes, h)
	w.pubs = append(w.pubs, publicationSeen{generation: c.ObservedGeneration, hash: h, at: time.Now()})
}

func (w *publicationWatch) result() ([]publicationSeen, []error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.pubs), slices.Clone(w.errs)
}

func describePublications(pubs []publicationSeen, start time.Time) string {
	s := ""
	for _, p := range pubs {
		s += fmt.Sprintf("gen %d at +%s; ", p.generation, p.at.Sub(start).Round(time.Millisecond))
	}
	return s
}

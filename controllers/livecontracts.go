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
	"bytes"
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
)

// Contracts a PDPair leaves to the live engines are read in the
// background, never in a reconcile: a bootstrap server that hangs, or a
// fleet of agents that do not answer, would otherwise hold a worker for
// the length of every timeout. A reconcile reads what the last read gave
// and starts the next one when it is due; a read that ends enqueues the
// pair. Reads are bounded one by one (livecontract's timeouts and size
// caps) and together (liveReadSlots at a time).

const (
	// DefaultLiveContractRefresh is how often a contract read from a live
	// engine is read again: a prefill that restarts with another contract
	// is re-planned within this period.
	DefaultLiveContractRefresh = 30 * time.Second
	// DefaultLiveContractRetry is how soon a live source that gave no
	// contract is asked again.
	DefaultLiveContractRetry = 5 * time.Second
	// liveReadSlots bounds the live reads in flight over all pairs.
	liveReadSlots = 8
	// liveReadBudget bounds one read: a bootstrap request, or the agents'
	// probes and one contract.
	liveReadBudget = 10 * time.Second
)

// liveRead is a contract one live source gave.
type liveRead struct {
	raw []byte
	// from names the place: the bootstrap URL, or the pod, rank and URL.
	from string
	// since is when these bytes were read first.
	since time.Time
	// tpSize and dpSize are what a bootstrap server reported.
	tpSize, dpSize int
}

// liveState is what a reconcile sees of one live source.
type liveState struct {
	// good is the last contract read (nil before the first).
	good *liveRead
	// failure is why the last read gave no contract (nil when it did).
	failure error
	// reading: a read is in flight.
	reading bool
}

// liveReader reads one role's contract for a pair.
type liveReader func(ctx context.Context) (*liveRead, error)

type liveKey struct {
	pair types.NamespacedName
	role string
}

type liveEntry struct {
	uid types.UID
	// target is what the source was asked at (the bootstrap address); a
	// spec that names another starts afresh.
	target    string
	state     liveState
	attempted time.Time
}

// liveContracts holds the last read of every live source.
type liveContracts struct {
	client         *livecontract.Client
	refresh, retry time.Duration
	slots          chan struct{}
	// events enqueue a pair whose read ended.
	events chan event.GenericEvent
	now    func() time.Time

	mu      sync.Mutex
	entries map[liveKey]*liveEntry
}

func newLiveContracts() *liveContracts {
	return &liveContracts{
		client:  livecontract.NewClient(0),
		refresh: DefaultLiveContractRefresh, retry: DefaultLiveContractRetry,
		slots: make(chan struct{}, liveReadSlots), events: make(chan event.GenericEvent, 64),
		now: time.Now, entries: map[liveKey]*liveEntry{},
	}
}

// observe returns what the source of pair's role last gave, and starts a
// read with read when one is due: none yet, the last failed and retry has
// passed, or the last succeeded and refresh has passed.
func (l *liveContracts) observe(pair *pdv1.PDPair, role, target string, read liveReader) liveState {
	key := liveKey{types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}, role}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[key]
	if e == nil || e.uid != pair.UID || e.target != target {
		e = &liveEntry{uid: pair.UID, target: target}
		l.entries[key] = e
	}
	wait := l.refresh
	if e.state.good == nil || e.state.failure != nil {
		wait = l.retry
	}
	if !e.state.reading && (e.attempted.IsZero() || l.now().Sub(e.attempted) >= wait) {
		e.state.reading, e.attempted = true, l.now()
		go l.read(key, e, pair.DeepCopy(), read)
	}
	return e.state
}

func (l *liveContracts) read(key liveKey, e *liveEntry, pair *pdv1.PDPair, read liveReader) {
	l.slots <- struct{}{}
	ctx, cancel := context.WithTimeout(context.Background(), liveReadBudget)
	got, err := read(ctx)
	cancel()
	<-l.slots

	l.mu.Lock()
	if l.entries[key] != e { // the pair went, or names another source
		l.mu.Unlock()
		return
	}
	e.state.reading, e.state.failure = false, err
	if err == nil {
		if old := e.state.good; old != nil && bytes.Equal(old.raw, got.raw) {
			got.since = old.since
		} else {
			got.since = l.now()
		}
		e.state.good = got
	}
	l.mu.Unlock()

	select {
	case l.events <- event.GenericEvent{Object: pair}:
	case <-time.After(time.Second): // the controller is not running: the requeue reads it
	}
}

// forget drops the sources of a pair that no longer exists.
func (l *liveContracts) forget(pair types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key := range l.entries {
		if key.pair == pair {
			delete(l.entries, key)
		}
	}
}

// readPrefill is the prefill's live source: its bootstrap server.
func readPrefill(client *livecontract.Client, addr string) liveReader {
	return func(ctx context.Context) (*liveRead, error) {
		p, err := client.Prefill(ctx, addr)
		if err != nil {
			return nil, err
		}
		return &liveRead{raw: p.Contract, from: p.URL, tpSize: p.TPSize, dpSize: p.DPSize}, nil
	}
}

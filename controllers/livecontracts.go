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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/engine"
)

// Contracts a PDPair leaves to the live engines are read in the
// background, never in a reconcile: a bootstrap server that hangs, or a
// fleet of agents that do not answer, would otherwise hold a worker for
// the length of every timeout. A reconcile reads what the last read gave
// and starts the next one when it is due; a read that ends enqueues the
// pair. Reads are bounded one by one (livecontract's timeouts and size
// caps, a context cancelled when the pair names another address or goes)
// and together (liveReadSlots at a time, shared fairly between namespaces:
// fairslots.go). What a read keeps is only its validated form
// (livecontracts_kept.go).

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
	// liveReadQueue bounds the reads one namespace may have waiting; a pair
	// past it is read at its next retry.
	liveReadQueue = 512
	// liveReadBudget bounds one read: a bootstrap request, or the agents'
	// probes and one contract.
	liveReadBudget = 10 * time.Second
)

// liveRead is what one live source gave, validated: a contract the engine
// decodes (its bytes, shared between pairs by SHA-256 and counted against
// the plan memory), or the refusal of one it does not (the bytes dropped).
type liveRead struct {
	kept *keptContract
	// refusal is why the engine would refuse the bytes the source gave (a
	// *transferplan.LayoutError quoting at most maxQuotedBytes of them).
	refusal error
	// sha256 and size identify the bytes the source gave.
	sha256 string
	size   int
	// from names the place: the bootstrap URL, or the pod, rank and URL.
	from string
	// since is when these bytes were read first.
	since time.Time
	// tpSize and dpSize are what a bootstrap server reported.
	tpSize, dpSize int
	// layout is a prefill's layout as its engine decoded it, for a live
	// prefill read (liveprefill.go); kept nil by contract reads.
	layout *engine.LivePrefill
}

// raw is the contract's bytes, nil for a refused one.
func (g *liveRead) raw() []byte {
	if g.kept == nil {
		return nil
	}
	return g.kept.raw
}

// liveState is what a reconcile sees of one live source.
type liveState struct {
	// good is the last contract read (nil before the first).
	good *liveRead
	// failure is why the last read gave no contract (nil when it did); its
	// text is fit for the status (livecontract.StatusOf).
	failure error
	// reading: a read is in flight.
	reading bool
}

// liveReader reads one role's contract for a pair: the bytes the source
// gave and where, or why there are none.
type liveReader func(ctx context.Context) (*fetchedContract, error)

// fetchedContract is what a source answered, before validation.
type fetchedContract struct {
	raw  []byte
	from string
	// tpSize and dpSize are what a bootstrap server reported.
	tpSize, dpSize int
	// layout is what a live prefill read decoded (nil for contracts).
	layout *engine.LivePrefill
}

type liveKey struct {
	pair types.NamespacedName
	role string
}

type liveEntry struct {
	uid types.UID
	// target is what the source was asked at (the bootstrap address); a
	// spec that names another starts afresh and cancels the read in flight.
	target    string
	state     liveState
	attempted time.Time
	// cancel ends the read in flight (nil when none).
	cancel context.CancelFunc
}

// liveContracts holds the last read of every live source.
type liveContracts struct {
	// client reads the decode agents; bootstrap the prefills' bootstrap
	// servers, restricted to --bootstrap-address-allowlist.
	client, bootstrap *livecontract.Client
	refresh, retry    time.Duration
	slots             *fairSlots
	kept              *keptContracts
	// events enqueue a pair whose read ended.
	events chan event.GenericEvent
	now    func() time.Time

	mu      sync.Mutex
	entries map[liveKey]*liveEntry
}

func newLiveContracts() *liveContracts {
	client := livecontract.NewClient(0)
	return &liveContracts{
		client: client, bootstrap: client,
		refresh: DefaultLiveContractRefresh, retry: DefaultLiveContractRetry,
		slots: newFairSlots(liveReadSlots, liveReadQueue), kept: newKeptContracts(nil),
		events: make(chan event.GenericEvent, 64),
		now:    time.Now, entries: map[liveKey]*liveEntry{},
	}
}

// errLiveQueueFull: the namespace has liveReadQueue reads waiting.
var errLiveQueueFull = fmt.Errorf("not read: %d reads of this namespace are waiting already; read again at the next retry", liveReadQueue)

// observe returns what the source of pair's role last gave, and starts a
// read with read when one is due: none yet, the last failed and retry has
// passed, or the last succeeded and refresh has passed.
func (l *liveContracts) observe(pair *pdv1.PDPair, role, target string, read liveReader) liveState {
	key := liveKey{types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}, role}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.entries[key]
	if e == nil || e.uid != pair.UID || e.target != target {
		if e != nil {
			l.drop(e)
		}
		e = &liveEntry{uid: pair.UID, target: target}
		l.entries[key] = e
	}
	wait := l.refresh
	if e.state.good == nil || e.state.failure != nil {
		wait = l.retry
	}
	if !e.state.reading && (e.attempted.IsZero() || l.now().Sub(e.attempted) >= wait) {
		ctx, cancel := context.WithCancel(context.Background())
		e.state.reading, e.attempted, e.cancel = true, l.now(), cancel
		name := pair.DeepCopy()
		if !l.slots.submit(pair.Namespace, ctx, func(ctx context.Context) { l.read(ctx, key, e, name, read) }) {
			cancel()
			e.state.reading, e.cancel, e.state.failure = false, nil, errLiveQueueFull
		}
	}
	return e.state
}

func (l *liveContracts) read(entryCtx context.Context, key liveKey, e *liveEntry, pair *pdv1.PDPair, read liveReader) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(entryCtx, liveReadBudget)
	fetched, err := read(ctx)
	cancel()
	var got *liveRead
	if err == nil {
		got, err = l.validate(key, fetched)
	}
	// fetched (the bytes read) is dropped here: only got is kept.
	if wait := l.unreachableDelay(err, start); wait > 0 {
		// Outside the slot: the wait holds a timer, not a read.
		go func() {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
				l.record(key, e, pair, got, err)
			case <-entryCtx.Done(): // re-targeted or deleted meanwhile
			}
		}()
		return
	}
	l.record(key, e, pair, got, err)
}

// validate keeps what a read gave: a contract as keptContracts judges it,
// or a prefill's layout, decoded by its engine already (a few numbers and
// a dtype word of at most 32 bytes, not counted against the plan memory).
func (l *liveContracts) validate(key liveKey, f *fetchedContract) (*liveRead, error) {
	if f.layout == nil {
		return l.kept.validate(role(key), f)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%+v", *f.layout))
	return &liveRead{layout: f.layout, from: f.from, sha256: hex.EncodeToString(sum[:])}, nil
}

// unreachableDelay is how much longer an Unreachable read waits before it
// is reported: every one is reported when the timeout would have ended it,
// so that when the status changes says no more than what it says (a
// refused port answers at once, a silent one at the timeout).
func (l *liveContracts) unreachableDelay(err error, start time.Time) time.Duration {
	var e *livecontract.Error
	if !errors.As(err, &e) || e.Outcome() != livecontract.ReasonUnreachable {
		return 0
	}
	return l.bootstrap.Timeout - time.Since(start)
}

// record keeps what a read gave and enqueues the pair.
func (l *liveContracts) record(key liveKey, e *liveEntry, pair *pdv1.PDPair, got *liveRead, err error) {
	l.mu.Lock()
	if l.entries[key] != e { // the pair went, or names another source
		l.mu.Unlock()
		l.kept.release(got)
		return
	}
	e.state.reading, e.cancel = false, nil
	e.state.failure = publicFailure(err)
	if err == nil {
		old := e.state.good
		if old != nil && old.sha256 == got.sha256 {
			got.since = old.since
		} else {
			got.since = l.now()
		}
		e.state.good = got
		l.kept.release(old)
	}
	l.mu.Unlock()

	select {
	case l.events <- event.GenericEvent{Object: pair}:
	case <-time.After(time.Second): // the controller is not running: the requeue reads it
	}
}

// drop ends an entry: its read in flight is cancelled (its connection
// closed), its kept contract released. Called with mu held.
func (l *liveContracts) drop(e *liveEntry) {
	if e.cancel != nil {
		e.cancel()
		e.cancel = nil
	}
	l.kept.release(e.state.good)
	e.state.good = nil
}

// forgetRole drops one source of a pair that no longer reads it (a spec
// that stopped naming a bootstrap address), ending its read in flight.
func (l *liveContracts) forgetRole(pair types.NamespacedName, role string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := liveKey{pair, role}
	if e := l.entries[key]; e != nil {
		l.drop(e)
		delete(l.entries, key)
	}
}

// forget drops the sources of a pair that no longer exists.
func (l *liveContracts) forget(pair types.NamespacedName) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, e := range l.entries {
		if key.pair == pair {
			l.drop(e)
			delete(l.entries, key)
		}
	}
}

func role(key liveKey) string { return key.role }

// liveFailure is a failed read as the status quotes it.
type liveFailure struct {
	// outcome is the livecontract outcome ("" for failures of the
	// manager's own, e.g. listing the decode pods).
	outcome livecontract.Reason
	text    string
}

func (f *liveFailure) Error() string { return f.text }

// publicFailure is err as the status may quote it: a *livecontract.Error
// by its outcome and the reader's own words, never by what the target
// sent (or net/http's words about it).
func publicFailure(err error) error {
	if err == nil {
		return nil
	}
	var e *livecontract.Error
	if errors.As(err, &e) {
		return &liveFailure{outcome: e.Outcome(), text: e.Status()}
	}
	return &liveFailure{text: err.Error()}
}

// failureOutcome is the livecontract outcome of a live state's failure.
func failureOutcome(err error) livecontract.Reason {
	var f *liveFailure
	if errors.As(err, &f) {
		return f.outcome
	}
	return ""
}

// readPrefill is the prefill's live source: its bootstrap server.
func readPrefill(client *livecontract.Client, addr string) liveReader {
	return func(ctx context.Context) (*fetchedContract, error) {
		p, err := client.Prefill(ctx, addr)
		if err != nil {
			return nil, err
		}
		return &fetchedContract{raw: p.Contract, from: p.URL, tpSize: p.TPSize, dpSize: p.DPSize}, nil
	}
}

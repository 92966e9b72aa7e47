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
	"sync"
)

// peerTable caches what the agent learned from bootstrap servers, for one
// route plan: per address the prefill's parallel info (or why it was
// refused), per (address, dp group) the endpoints of the ranks the plan
// sends to. Each address is resolved by at most one goroutine at a time;
// rooms that arrive meanwhile wait in its lists rather than each fetching.
type peerTable struct {
	// views are the plan sets the rank holds, the current one first; each
	// address is served by the one its prefill's answer picked.
	views []*routeView
	mu    sync.Mutex
	addrs map[string]*peerAddr
}

// peerAddr is one bootstrap address. Fields are guarded by peerTable.mu.
type peerAddr struct {
	addr string
	// info is set once fetched and found to match a plan; view is the plan
	// set it matched, which every room of the address runs.
	info *prefillInfo
	view *routeView
	// refusal is set when the live layout does not match the plan; rooms
	// are refused without asking again until refusedUntil.
	refusal      *RoomFailure
	refusedUntil int64
	groups       map[int]*peerGroup
	// waiting are rooms that need the parallel info first.
	waiting   []*roomEntry
	resolving bool
	misses    int
}

// peerGroup is one prefill dp group of an address.
type peerGroup struct {
	// endpoints are the ZMQ endpoints of view.sends, in order, once every
	// rank's address was fetched and the registration went out.
	endpoints []string
	waiting   []*roomEntry
}

func newPeerTable(views []*routeView) *peerTable {
	return &peerTable{views: views, addrs: make(map[string]*peerAddr)}
}

// bindResult is what Open must do with a room after consulting the cache.
type bindResult struct {
	endpoints []string     // non-nil: bootstrapped from cache, in dp group group
	group     int          //
	refusal   *RoomFailure // non-nil: refuse the room
	// startResolver: the room waits; the caller must start a resolver.
	startResolver bool
	addr          *peerAddr
	// adopt: the address runs another plan set than the room's; the caller
	// moves the room onto it (adoptView) and binds again.
	adopt *routeView
}

// bind looks room e up in the cache; on a miss it queues e for resolution.
func (t *peerTable) bind(e *roomEntry, now int64) bindResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	pa := t.addrs[e.addr]
	if pa == nil {
		pa = &peerAddr{addr: e.addr, groups: make(map[int]*peerGroup)}
		t.addrs[e.addr] = pa
	}
	if pa.refusal != nil {
		if now < pa.refusedUntil {
			return bindResult{refusal: pa.refusal}
		}
		pa.refusal = nil // look again: the prefill may have been fixed
	}
	if pa.info == nil {
		pa.waiting = append(pa.waiting, e)
	} else if pa.view != e.view {
		return bindResult{adopt: pa.view}
	} else {
		g := dpGroup(e.id, pa.info.DPSize)
		grp := pa.group(g)
		if grp.endpoints != nil {
			return bindResult{endpoints: grp.endpoints, group: g}
		}
		grp.waiting = append(grp.waiting, e)
	}
	res := bindResult{startResolver: !pa.resolving, addr: pa}
	pa.resolving = true
	return res
}

func (pa *peerAddr) group(g int) *peerGroup {
	grp := pa.groups[g]
	if grp == nil {
		grp = &peerGroup{}
		pa.groups[g] = grp
	}
	return grp
}

// dpGroup is the prefill dp group that serves a room.
func dpGroup(room int64, dpSize int) int {
	if dpSize <= 1 {
		return 0
	}
	return int(room % int64(dpSize))
}

// attached reports whether pa is still the table's entry for its address
// (a heartbeat failure detaches it).
func (t *peerTable) attached(pa *peerAddr) bool {
	return t.addrs[pa.addr] == pa
}

// drop forgets addr and returns the endpoints its groups used.
func (t *peerTable) drop(addr string) (endpoints []string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	pa, ok := t.addrs[addr]
	if !ok {
		return nil, false
	}
	delete(t.addrs, addr)
	for _, g := range pa.groups {
		endpoints = append(endpoints, g.endpoints...)
	}
	return endpoints, true
}

// livePeer is an address the heartbeat watches and what it answered.
type livePeer struct {
	addr string
	info *prefillInfo
	view *routeView
}

// live returns the addresses whose parallel info is cached: the ones the
// heartbeat watches.
func (t *peerTable) live() []livePeer {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]livePeer, 0, len(t.addrs))
	for addr, pa := range t.addrs {
		if pa.info != nil {
			out = append(out, livePeer{addr, pa.info, pa.view})
		}
	}
	return out
}

// missed records a heartbeat result for addr and returns the consecutive
// misses so far (0 after a success or when addr is no longer known).
func (t *peerTable) missed(addr string, miss bool) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	pa, ok := t.addrs[addr]
	if !ok {
		return 0
	}
	if !miss {
		pa.misses = 0
	} else {
		pa.misses++
	}
	return pa.misses
}

// forgetExpiredRefusals drops refused addresses whose refusal expired and
// that nothing waits on, so that addresses never used again leave no entry.
// viewOf is the plan set addr runs, or the current one while it is not
// known: what a room opened for addr starts with.
func (t *peerTable) viewOf(addr string) *routeView {
	if len(t.views) == 1 {
		return t.views[0] // one set: nothing to look up on the hot path
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if pa := t.addrs[addr]; pa != nil && pa.view != nil {
		return pa.view
	}
	return t.views[0]
}

func (t *peerTable) forgetExpiredRefusals(now int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for addr, pa := range t.addrs {
		if pa.refusal != nil && now >= pa.refusedUntil && !pa.resolving {
			delete(t.addrs, addr)
		}
	}
}

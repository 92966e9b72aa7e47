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

package prefillpeer

import (
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"

	"fmt"
	"slices"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
)

// maxFailedRooms bounds the failed rooms a rank remembers (the engine keeps
// a failed room's status until the request is discarded).
const maxFailedRooms = 4096

// contractRank is a rank's state on the cache-contract wire, owned by its
// receive goroutine like the engine's bootstrap thread: it does what
// MooncakeKVManagerPrefill._handle_bootstrap_message does.
type contractRank struct {
	prefill        *plancontract.CacheContract // this rank's own contract
	tpSize, tpRank int
	plans          map[planKey]*pairPlan
	sessions       map[string]*contractSession
	// rejected are the status endpoints of sessions whose registration was
	// refused: their rooms are failed there.
	rejected map[string]string
	rooms    map[int64]map[string]*contractSession
	failed   map[int64]bool
	failedQ  []int64
}

// contractSession is a registered decode rank, as this rank prepared it.
type contractSession struct {
	registration kvcontract.Registration
	canonical    string // the decode contract as the engine re-encodes it
	endpoint     string // where its statuses go
	dummy        bool
	// expected are the decode ranks whose pre-allocations a room waits for.
	expected  []int
	fragments int
	layout    kvcontract.ManifestLayout
	layoutErr error
}

func newContractRank(cfg *Config, engineRank int) (*contractRank, error) {
	contract, err := plancontract.Parse(cfg.rankContract(engineRank))
	if err != nil {
		return nil, err
	}
	tp := cfg.WorldSize / cfg.DPSize
	return &contractRank{prefill: contract, tpSize: tp, tpRank: engineRank % tp,
		plans: map[planKey]*pairPlan{}, sessions: map[string]*contractSession{}, rejected: map[string]string{},
		rooms: map[int64]map[string]*contractSession{}, failed: map[int64]bool{}}, nil
}

// handle takes a message of the contract wire: a registration or a
// pre-allocation.
func (c *contractRank) handle(r *Rank, msg [][]byte) {
	if kvwire.IsRegistration(msg) {
		c.register(r, msg)
		return
	}
	c.preAllocate(r, msg)
}

func (c *contractRank) register(r *Rank, msg [][]byte) {
	reg, err := kvcontract.DecodeRegistration(msg)
	var s *contractSession
	if err == nil {
		s, err = c.prepare(reg)
	}
	if err == nil {
		if prev := c.sessions[reg.SessionID]; prev != nil && !sameRegistration(prev, s) {
			err = fmt.Errorf("a conflicting registration for an active session")
		}
	}
	r.rec.contractRegistration(ContractRegistration{Registration: reg, Accepted: err == nil, Dummy: s != nil && s.dummy, Problem: err,
		ExpectedDecodeRanks: expectedOf(s, err), Fragments: fragmentsOf(s, err)})
	if err != nil {
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: NoRoom, Reason: ReasonRegistrationRefused, Detail: err.Error(), Err: err})
		if route, rerr := kvcontract.DecodeRegistrationRoute(msg); rerr == nil {
			c.rejectSession(r, route)
		}
		return
	}
	c.sessions[reg.SessionID] = s
	delete(c.rejected, reg.SessionID)
}

// rejectSession fails the rooms that already count on the session and
// remembers where to fail its later ones (_reject_decode_registration).
func (c *contractRank) rejectSession(r *Rank, route kvcontract.RegistrationRoute) {
	for room, dests := range c.rooms {
		if _, ok := dests[route.SessionID]; ok {
			c.abortRoom(r, room)
		}
	}
	delete(c.sessions, route.SessionID)
	c.rejected[route.SessionID] = statusEndpoint(route.DecodeIP, route.DecodeStatusPort)
}

// preAllocate files one pre-allocation, or fails its room: the engine's
// order of checks, then its fan-out check once every expected decode rank
// is in.
func (c *contractRank) preAllocate(r *Rank, msg [][]byte) {
	head, err := kvcontract.DecodePreAllocationRoute(msg)
	if err != nil { // no room to fail
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: roomOf(msg), Reason: ReasonMalformedMessage, Detail: err.Error(), Err: err})
		return
	}
	p, err := kvcontract.DecodePreAllocation(msg)
	r.rec.preAllocation(head, len(msg[2]) == 0)
	s := c.sessions[head.SessionID]
	switch {
	case err != nil:
	case s == nil:
		err = fmt.Errorf("a pre-allocation from session %s, which has no accepted registration here", head.SessionID)
	case p.Dummy() != s.dummy:
		err = fmt.Errorf("a %s pre-allocation from session %s, registered as a %s", kindName(p.Dummy()), head.SessionID, kindName(s.dummy))
	case c.failed[head.Room]:
		r.push.send(outgoing{endpoint: s.endpoint, status: failedStatus(head.Room, c.tpRank)})
		return
	case !s.dummy && s.layoutErr != nil:
		// The engine's manifest check crashes on such a contract, outside its
		// handler's error path: the room is never answered.
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: head.Room, Reason: ReasonNeverAnswers, Detail: s.layoutErr.Error(), Err: s.layoutErr})
		return
	case !s.dummy:
		_, err = kvcontract.ValidateManifest(p.Manifest, &s.layout)
	}
	if err == nil {
		err = c.checkFanOut(head, s)
	}
	if err != nil {
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: head.Room, Reason: ReasonPreAllocationRefused, Detail: err.Error(), Err: err})
		c.abortRoom(r, head.Room)
		c.failSession(r, head.Room, head.SessionID)
		return
	}
	dests := c.rooms[head.Room]
	if dests == nil {
		dests = make(map[string]*contractSession, len(s.expected))
		c.rooms[head.Room] = dests
	}
	dests[head.SessionID] = s
	if len(dests) == len(s.expected) {
		delete(c.rooms, head.Room)
		r.rec.roomCompleted()
		c.answerContract(r, head.Room, dests)
	}
}

// checkFanOut is the engine's: one pre-allocation per session, no more than
// the expected decode ranks, and once all are in, exactly those ranks.
func (c *contractRank) checkFanOut(head kvcontract.PreAllocation, s *contractSession) error {
	dests := c.rooms[head.Room]
	if _, dup := dests[head.SessionID]; dup {
		return fmt.Errorf("a second pre-allocation of room %d from session %s", head.Room, head.SessionID)
	}
	n := len(dests) + 1
	if n > len(s.expected) {
		return fmt.Errorf("%d pre-allocations for room %d; decode ranks %v are expected", n, head.Room, s.expected)
	}
	if n < len(s.expected) {
		return nil
	}
	ranks := []int{s.registration.DecodeTPRank}
	for _, d := range dests {
		if d.registration.DecodeTPSize != s.registration.DecodeTPSize || !slices.Equal(d.expected, s.expected) {
			return fmt.Errorf("room %d mixes decode TP sizes %d and %d or expected ranks %v and %v", head.Room,
				d.registration.DecodeTPSize, s.registration.DecodeTPSize, d.expected, s.expected)
		}
		ranks = append(ranks, d.registration.DecodeTPRank)
	}
	slices.Sort(ranks)
	if !slices.Equal(slices.Compact(ranks), s.expected) {
		return fmt.Errorf("room %d has pre-allocations of decode ranks %v; the plan expects %v", head.Room, ranks, s.expected)
	}
	return nil
}

// abortRoom fails a room: Failed to every non-dummy session already filed
// under it, and the room stays failed (abort_room). The caller has recorded
// why (a RankError).
func (c *contractRank) abortRoom(r *Rank, room int64) {
	c.markFailed(room)
	for id, s := range c.rooms[room] {
		if !s.dummy {
			r.push.send(outgoing{endpoint: c.endpointOf(id, s), status: failedStatus(room, c.tpRank)})
		}
	}
	delete(c.rooms, room)
}

// failSession tells the session whose pre-allocation failed the room.
func (c *contractRank) failSession(r *Rank, room int64, session string) {
	if ep := c.endpointOf(session, c.sessions[session]); ep != "" {
		r.push.send(outgoing{endpoint: ep, status: failedStatus(room, c.tpRank)})
	}
}

func (c *contractRank) endpointOf(session string, s *contractSession) string {
	if s != nil {
		return s.endpoint
	}
	return c.rejected[session]
}

func (c *contractRank) markFailed(room int64) {
	if c.failed[room] {
		return
	}
	if len(c.failedQ) >= maxFailedRooms {
		delete(c.failed, c.failedQ[0])
		c.failedQ = c.failedQ[1:]
	}
	c.failed[room] = true
	c.failedQ = append(c.failedQ, room)
}

// answerContract runs the room's script once every expected pre-allocation
// is in. A dummy rank sends nothing (the engine marks the room done).
func (c *contractRank) answerContract(r *Rank, room int64, dests map[string]*contractSession) {
	var endpoints []string
	for _, s := range dests {
		if !s.dummy {
			endpoints = append(endpoints, s.endpoint)
		}
	}
	if len(endpoints) > 0 {
		r.play(room, endpoints, r.script.lookup(room, r.EngineRank))
	}
}

func failedStatus(room int64, tpRank int) kvwire.Status {
	return kvwire.Status{Room: room, State: kvwire.Failed, PrefillTPRank: tpRank, BootstrapToken: kvwire.NoBootstrapToken}
}

func kindName(dummy bool) string {
	if dummy {
		return "dummy"
	}
	return "non-dummy"
}

func expectedOf(s *contractSession, err error) []int {
	if err != nil || s == nil {
		return nil
	}
	return s.expected
}

func fragmentsOf(s *contractSession, err error) int {
	if err != nil || s == nil {
		return 0
	}
	return s.fragments
}

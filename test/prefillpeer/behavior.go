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
	"sync"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Action is what a rank does once a room's requests are all in.
type Action int

const (
	// Succeed sends Success, with the token and spec candidates, to every
	// non-dummy decode rank of the room (the zero Action).
	Succeed Action = iota
	// Fail sends Failed to every non-dummy decode rank of the room.
	Fail
	// Silent sends nothing, ever.
	Silent
	// Die kills the whole peer: every rank's sockets close and the bootstrap
	// server stops answering, as when the prefill process dies mid-room.
	Die
)

func (a Action) String() string {
	switch a {
	case Succeed:
		return "succeed"
	case Fail:
		return "fail"
	case Silent:
		return "silent"
	case Die:
		return "die"
	}
	return "unknown"
}

// Behavior is a room's script.
type Behavior struct {
	Action Action
	// Delay holds the answer back (Succeed, Fail) or the death (Die).
	Delay time.Duration
	// BootstrapToken and SpecCandidateIDs go with Success.
	BootstrapToken   int64
	SpecCandidateIDs []int32
}

// Success answers Success with a first token and optional spec candidates.
func Success(token int64, specCandidateIDs ...int32) Behavior {
	return Behavior{Action: Succeed, BootstrapToken: token, SpecCandidateIDs: specCandidateIDs}
}

// Failure answers Failed.
func Failure() Behavior { return Behavior{Action: Fail} }

// Silence never answers.
func Silence() Behavior { return Behavior{Action: Silent} }

// Death kills the peer when the room's requests are in.
func Death() Behavior { return Behavior{Action: Die} }

// After delays the behaviour by d.
func (b Behavior) After(d time.Duration) Behavior {
	b.Delay = d
	return b
}

// status is the message the behaviour sends for room from a rank.
func (b Behavior) status(room int64, tpRank int) kvwire.Status {
	if b.Action == Fail {
		return kvwire.Status{Room: room, State: kvwire.Failed, PrefillTPRank: tpRank, BootstrapToken: kvwire.NoBootstrapToken}
	}
	return kvwire.Status{Room: room, State: kvwire.Success, PrefillTPRank: tpRank, BootstrapToken: b.BootstrapToken, SpecCandidateIDs: b.SpecCandidateIDs}
}

// script maps rooms (and optionally engine ranks) to behaviours. Lookups
// happen once per completed room per rank, so a mutex is cheap enough.
type script struct {
	mu       sync.RWMutex
	fallback Behavior
	rooms    map[int64]Behavior
	rankRoom map[rankRoom]Behavior
}

type rankRoom struct {
	room       int64
	engineRank int
}

func newScript(fallback Behavior) *script {
	return &script{fallback: fallback, rooms: map[int64]Behavior{}, rankRoom: map[rankRoom]Behavior{}}
}

func (s *script) lookup(room int64, engineRank int) Behavior {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if b, ok := s.rankRoom[rankRoom{room, engineRank}]; ok {
		return b
	}
	if b, ok := s.rooms[room]; ok {
		return b
	}
	return s.fallback
}

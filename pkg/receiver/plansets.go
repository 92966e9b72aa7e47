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
	"fmt"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// During a rollout the instances of a role's old and new layouts serve side
// by side, and a decode rank holds a plan set per prefill layout it may
// meet (InstallPlanSets). A room's set is its prefill's: the first set
// whose layout the bootstrap server's answer matches (on the v1 wire its
// TP, DP, MLA L1.5 flag and item and unit lengths; on the contract wire its
// contract), cached per address with the rest of what the address answered.
// With one set nothing changes on the hot path (peerTable.viewOf).

// fetchPrefillInfo asks a bootstrap server for its parallel info and holds
// the answer to each plan set in turn, the current one first; it returns
// the first set that takes it. The answer names its wire (one with
// cache_layout is the contract wire, any other v1). None taking it is the
// current set's refusal, naming every layout served when there are several.
func (m *Manager) fetchPrefillInfo(views []*routeView, addr string) (*prefillInfo, *routeView, *RoomFailure) {
	ans, err := m.boot.bootstrapAnswer(m.ctx, addr)
	if err != nil {
		return nil, nil, &RoomFailure{Reason: ReasonParallelInfoUnavailable, Message: fmt.Sprintf("could not fetch the prefill parallel info from bootstrap address %s: %v", addr, err)}
	}
	var first *RoomFailure
	for _, v := range views {
		var (
			info    *prefillInfo
			failure *RoomFailure
		)
		if ans.Wire.Name() != v.wire.Name() {
			failure = v.wire.AnswerMismatch(v, addr)
		} else if info, failure = v.wire.CheckAnswer(m.host(), v, addr, ans.Value); failure == nil {
			return info, v, nil
		}
		if !refusesAddress(failure) {
			return nil, nil, failure // not about what the prefill is: no other set would do
		}
		if first == nil {
			first = failure
		}
	}
	if len(views) > 1 {
		first = &RoomFailure{Reason: first.Reason, Message: fmt.Sprintf("prefill at %s matches none of the %d layouts this agent holds plans for (%s); against the current plan: %s",
			addr, len(views), describeServed(views), first.Message)}
	}
	return nil, nil, first
}

// describeServed lists the prefill layouts of views: "prefill TP 8, prefill TP 4".
func describeServed(views []*routeView) string {
	out := make([]string, len(views))
	for i, v := range views {
		out[i] = describePrefill(&v.snap.Layout)
	}
	return strings.Join(out, ", ")
}

func describePrefill(rec *transferplan.LayoutRecord) string {
	s := fmt.Sprintf("prefill TP %d", rec.Prefill.TPSize)
	if rec.Prefill.DPSize > 1 {
		s += fmt.Sprintf(" DP %d", rec.Prefill.DPSize)
	}
	if rec.MLAL15Cache {
		s += " MLA L1.5"
	}
	if h := rec.PrefillContractSHA256; h != "" {
		s += " contract " + wire.ShortHash(h)
	}
	return s
}

// adoptView moves a room that is still bootstrapping onto the plan set its
// prefill's answer picked: nothing was sent for it yet, so its state starts
// over with the set's counts, and a request the engine queued is checked
// again by the set's wire.
func (m *Manager) adoptView(e *roomEntry, v *routeView) {
	failed := ""
	m.rooms.withEntry(e, func(s *roomShard) {
		if e.state.Status() != Bootstrapping || e.view == v {
			return
		}
		e.view, e.state = v, NewRoomState(v.expected, v.required)
		if e.pending == nil {
			return
		}
		if err := v.wire.CheckRequest(m.host(), e, e.pending); err != nil {
			e.pending = nil
			if s.fail(e, ReasonManifestRefused, err.Error()) {
				failed = err.Error()
			}
		}
	})
	if failed != "" {
		m.metrics.roomFailed(ReasonManifestRefused)
		m.log.Debug("room failed", "room", e.id, "reason", ReasonManifestRefused, "message", failed)
	}
}

// fitViews holds the plan sets to the engine's registration. The first,
// which the rank runs, must fit it; another that does not (made for other
// decode buffers or another decode contract, as a decode rollout may
// publish beside it) is left out with a warning, rather than refusing the
// engine or every set: rooms to its prefills are then refused by layout.
func (m *Manager) fitViews(reg *registration, views []*routeView) ([]*routeView, error) {
	if err := checkEngine(reg, views[0]); err != nil {
		return nil, err
	}
	out := views[:1:1]
	for k, v := range views[1:] {
		if err := checkEngine(reg, v); err != nil {
			m.log.Warn("plan set left out: the engine's registration does not fit it", "engineRank", m.cfg.EngineRank,
				"set", k+1, "hash", shortHash(v.snap.Hash), "error", err)
			continue
		}
		out = append(out, v)
	}
	return out, nil
}

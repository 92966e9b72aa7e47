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
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// handleStatus applies one status message from sender (the connection's
// peer IP). Anyone who can reach the status socket can send one, so a
// message counts only if it parses, names an open room that sent its
// request, names a rank that room expects, and comes from the host the room
// sent that rank its request; everything else is counted by reason and
// logged (rate-limited).
func (m *Manager) handleStatus(frames [][]byte, sender string) {
	st, err := kvwire.DecodeStatus(frames)
	if err != nil {
		m.reject(string(kvwire.ReasonOf(err)), -1, -1, err.Error())
		return
	}
	var (
		obs      Observation
		role     rankRole // negative when the rank owes this room no status
		foreign  bool     // the rank is expected, the sender is not its host
		openedAt int64
		failure  *RoomFailure
	)
	now := m.now()
	found := m.rooms.with(st.Room, func(s *roomShard, e *roomEntry) {
		idx := e.view.expectedIndex(st.PrefillTPRank)
		if idx < 0 {
			role = rankRole(idx)
			return
		}
		if foreign = !e.sentFrom(st.PrefillTPRank, sender); foreign {
			return
		}
		obs = e.state.Observe(idx, st.PrefillTPRank, st.State, st.BootstrapToken, st.SpecCandidateIDs)
		s.settle(e)
		openedAt, failure = e.openedAt, e.state.Failure()
	})
	switch {
	case !found:
		m.reject(RejectUnknownRoom, st.Room, st.PrefillTPRank, "no open room with this number (late, cleared or forged)")
	case role < 0:
		m.reject(rejectReasons[role], st.Room, st.PrefillTPRank, "the room's plan expects no status from this prefill TP rank")
	case foreign:
		m.reject(RejectSenderAddress, st.Room, st.PrefillTPRank, "sent from "+sender+", not from the host the room sent this prefill TP rank its request")
	case obs.Ignored():
		m.reject(observationReject[obs], st.Room, st.PrefillTPRank, "status "+st.State.String()+" ignored")
	default:
		m.metrics.statusApplied()
		switch obs {
		case ObservedCompleted:
			m.metrics.roomSucceeded(time.Duration(now - openedAt))
		case ObservedFailed:
			m.metrics.roomFailed(failure.Reason)
			m.log.Warn("prefill reported a failed transfer", "room", st.Room, "prefillTPRank", st.PrefillTPRank, "message", failure.Message)
		}
	}
}

var observationReject = map[Observation]string{
	ObservedDuplicate:    RejectDuplicateSuccess,
	ObservedFinished:     RejectRoomFinished,
	ObservedNotRequested: RejectRoomNotRequested,
	ObservedInvalid:      RejectUnknownStatus,
}

// reject counts an ignored status message and logs it, at most once per
// second per reason so that a flood cannot flood the log too.
// dropOversizeStatus counts a message of more frames or bytes than any
// status has, which the status socket dropped unread.
func (m *Manager) dropOversizeStatus(err *zmqsock.OversizeError, sender string) {
	reason := kvwire.ReasonFrameCount
	if err.Frames <= err.MaxFrames {
		reason = kvwire.ReasonPayloadSize
	}
	m.reject(string(reason), -1, -1, "from "+sender+": "+err.Error())
}

func (m *Manager) reject(reason string, room int64, rank int, detail string) {
	m.metrics.statusRejected(reason)
	if m.rejectLog.allow(reason, m.now()) {
		m.log.Warn("status message ignored", "reason", reason, "room", room, "prefillTPRank", rank, "detail", detail)
	}
}

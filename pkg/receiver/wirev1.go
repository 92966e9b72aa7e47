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
	"context"
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// v1Wire is tokenspeed's v1 wire (docs/wire.md): the engine registers one
// pointer per KV and state buffer, the agent sends each target of the plan
// one registration with them and per room a request with the engine's page
// indices and the target's fragments; the bootstrap server answers item
// lengths, checked against the plan's layout (wirev1layout.go).
type v1Wire struct {
	// fragments are the fragment frames of each send of the view, encoded
	// once per plan; empty for dummies and for targets without fragments
	// (identity, MLA): then no fragment frames are sent.
	fragments []kvv1.FragmentFrames
}

func (*v1Wire) name() kvwire.Wire { return kvwire.WireV1 }

func (*v1Wire) checkPlan(*transferplan.RoutePlan) error { return nil }

// sendsDummyTargets: a v1 dummy target is sent an empty request.
func (*v1Wire) sendsDummyTargets() bool { return true }

// finishView encodes every real target's fragments: a target's fragments
// are fixed by its plan, so every room reuses the frames.
func (w *v1Wire) finishView(v *routeView) error {
	w.fragments = make([]kvv1.FragmentFrames, len(v.sends))
	for i, t := range v.snap.Plan.Targets { // the sends start with the plan's targets, in order
		if !t.IsDummy {
			w.fragments[i] = kvv1.EncodeFragmentFrames(t.Fragments)
		}
	}
	return nil
}

func (*v1Wire) validateEngine(info EngineInfo, advertiseHost string) (any, error) {
	if info.ArenaPtr != 0 {
		return nil, errorf(CodeInvalidArgument, "a v1 registration names its buffers (kvDataPtrs, stateDataPtrs), not an arena")
	}
	if len(info.KVDataPtrs) == 0 {
		return nil, errorf(CodeInvalidArgument, "kvDataPtrs is empty: a decode rank registers at least one KV buffer")
	}
	reg := kvv1.Registration{DecodeIP: advertiseHost, DecodeStatusPort: 1, SessionID: info.SessionID, KVPtrs: info.KVDataPtrs, StatePtrs: info.StateDataPtrs}
	if err := reg.Validate(); err != nil {
		return nil, errorf(CodeInvalidArgument, "sessionId %q: %v", info.SessionID, err)
	}
	return nil, nil
}

// checkEngine holds the buffer counts and every fragment's buffer index to
// the engine's registration.
func (*v1Wire) checkEngine(reg *registration, v *routeView) error {
	if err := checkEngineBuffers(reg.EngineInfo, v.snap); err != nil {
		return err
	}
	return checkFragmentsFit(reg.EngineInfo, v)
}

func (*v1Wire) engineMismatch(v *routeView) error {
	return errorf(CodeWireMismatch, "the engine registered a cache contract, but the plan (%s) is for the v1 wire: register its KV and state buffer pointers (kvDataPtrs, stateDataPtrs), or publish a contract pair (spec.wire: CacheContract)",
		shortHash(v.snap.Hash))
}

// checkEngineBuffers compares the engine's buffer counts with the layout
// its plan was made for: prefill ranks index the registered pointers by the
// plan's buffer numbers, so a different count would move bytes to the
// wrong place.
func checkEngineBuffers(info EngineInfo, snap PlanSnapshot) error {
	kv, state := len(snap.Layout.DecodeKVItemLens), len(snap.Layout.DecodeStateItemLens)
	if len(info.KVDataPtrs) != kv || len(info.StateDataPtrs) != state {
		return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(
			"the engine registers %d KV and %d state buffers but the plan (%s) was made for %d KV and %d state buffers",
			len(info.KVDataPtrs), len(info.StateDataPtrs), shortHash(snap.Hash), kv, state)}
	}
	return nil
}

func (*v1Wire) decodeAnswer(body []byte) (any, error) {
	p, err := kvv1.DecodeParallelInfo(body)
	return &p, err
}

func (*v1Wire) checkAnswer(_ *Manager, v *routeView, addr string, answer any) (*prefillInfo, *RoomFailure) {
	ans := answer.(*kvv1.ParallelInfo)
	if err := checkLayout(ans, v.snap.Layout); err != nil {
		return nil, &RoomFailure{Reason: ReasonLayoutMismatch, Message: fmt.Sprintf("prefill at %s does not match the layout the plan was made for (plan %s): %v", addr, shortHash(v.snap.Hash), err)}
	}
	return &prefillInfo{tpSize: ans.PrefillTPSize, dpSize: ans.PrefillDPSize}, nil
}

func (*v1Wire) answerMismatch(v *routeView, addr string) *RoomFailure {
	return &RoomFailure{Reason: ReasonWireMismatch, Message: fmt.Sprintf(
		"the bootstrap server at %s answered the cache-contract wire (cache_layout), but the plan (%s) is for the v1 wire: this prefill runs a tokenspeed with the cache contract; publish a contract pair (spec.wire: CacheContract); nothing was sent to it",
		addr, shortHash(v.snap.Hash))}
}

func (*v1Wire) registrationFrames(m *Manager, _ *routeView, eng *registration) [][]byte {
	reg := kvv1.Registration{
		DecodeIP: m.cfg.AdvertiseHost, DecodeStatusPort: m.status.port, SessionID: eng.SessionID,
		KVPtrs: eng.KVDataPtrs, StatePtrs: eng.StateDataPtrs,
	}
	return reg.Frames()
}

// probe is GET /health: on the v1 wire a prefill's answer does not change
// under a room.
func (*v1Wire) probe(ctx context.Context, m *Manager, _ *peerTable, p livePeer) error {
	return m.boot.health(ctx, p.addr)
}

// checkRequest rejects a payload a prefill rank would not parse, or would
// use to index outside its arrays (numpy takes a negative index from the
// end: a transfer to the wrong page rather than an error).
func (w *v1Wire) checkRequest(m *Manager, e *roomEntry, req *TransferRequest) error {
	if req.Manifest != nil {
		return errorf(CodeWireMismatch, "room %d is on the v1 wire: its request is page indices (kvIndices, auxIndex), not a block manifest", e.id)
	}
	for _, list := range [...]struct {
		name    string
		indices []int64
	}{{"kvIndices", req.KVIndices}, {"mambaIndices", req.MambaIndices}} {
		for i, v := range list.indices {
			if v < 0 {
				return errorf(CodeInvalidArgument, "room %d's request: %s[%d] is %d; page and slot indices are non-negative", e.id, list.name, i, v)
			}
		}
	}
	q := w.request(m, e, &e.view.sends[0], req)
	q.Dummy = false
	if err := q.Validate(); err != nil {
		return errorf(CodeInvalidArgument, "room %d's request: %v", e.id, err)
	}
	return nil
}

// sendRequest sends each real target the room's request with its
// fragments, each dummy an empty one.
func (w *v1Wire) sendRequest(m *Manager, e *roomEntry, req *TransferRequest) {
	for i := range e.view.sends {
		t := &e.view.sends[i]
		q := w.request(m, e, t, req)
		frames := q.AppendFrames(make([][]byte, 0, kvv1.RequestFramesWithFragments), w.fragments[i])
		if err := m.push.send(e.endpoints[i], frames); err != nil {
			m.failRoom(e, ReasonSendFailed, fmt.Sprintf("could not send room %d's request to prefill TP rank %d (dp group %d of %s): %v", e.id, t.rank, e.group, e.addr, err))
			return
		}
	}
}

func (*v1Wire) request(m *Manager, e *roomEntry, t *sendTarget, req *TransferRequest) kvv1.Request {
	q := kvv1.Request{
		Room: e.id, DecodeIP: m.cfg.AdvertiseHost, DecodeStatusPort: m.status.port, SessionID: e.reg.SessionID,
		RequiredDstInfoNum: t.dstInfo, Dummy: t.dummy,
	}
	if !t.dummy {
		q.KVIndices, q.AuxIndex, q.DecodePrefixLen, q.MambaIndices = req.KVIndices, req.AuxIndex, req.DecodePrefixLen, req.MambaIndices
	}
	return q
}

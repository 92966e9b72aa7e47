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

package v1

import (
	"context"
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Wire is tokenspeed's v1 wire (docs/wire.md): the engine registers one
// pointer per KV and state buffer, the agent sends each target of the plan
// one registration with them and per room a request with the engine's page
// indices and the target's fragments; the bootstrap server answers item
// lengths, checked against the plan's layout (layout.go).
type Wire struct {
	// fragments are the fragment frames of each send of the view, encoded
	// once per plan; empty for dummies and for targets without fragments
	// (identity, MLA): then no fragment frames are sent.
	fragments []kvv1.FragmentFrames
}

// New is a v1 wire for one route view.
func New() *Wire { return &Wire{} }

var _ wire.Wire = (*Wire)(nil)

func (*Wire) Name() kvwire.Wire { return kvwire.WireV1 }

func (*Wire) CheckPlan(*transferplan.RoutePlan) error { return nil }

// SendsDummyTargets: a v1 dummy target is sent an empty request.
func (*Wire) SendsDummyTargets() bool { return true }

// FinishView encodes every real target's fragments: a target's fragments
// are fixed by its plan, so every room reuses the frames.
func (w *Wire) FinishView(v wire.View) error {
	w.fragments = make([]kvv1.FragmentFrames, v.NumSends())
	for i, t := range v.Plan().Targets { // the sends start with the plan's targets, in order
		if !t.IsDummy {
			w.fragments[i] = kvv1.EncodeFragmentFrames(t.Fragments)
		}
	}
	return nil
}

func (*Wire) ValidateEngine(info *wire.EngineInfo, advertiseHost string) (any, error) {
	if info.ArenaPtr != 0 {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "a v1 registration names its buffers (kvDataPtrs, stateDataPtrs), not an arena")
	}
	if len(info.KVDataPtrs) == 0 {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "kvDataPtrs is empty: a decode rank registers at least one KV buffer")
	}
	reg := kvv1.Registration{DecodeIP: advertiseHost, DecodeStatusPort: 1, SessionID: info.SessionID, KVPtrs: info.KVDataPtrs, StatePtrs: info.StateDataPtrs}
	if err := reg.Validate(); err != nil {
		return nil, wire.Errorf(wire.CodeInvalidArgument, "sessionId %q: %v", info.SessionID, err)
	}
	return nil, nil
}

// CheckEngine holds the buffer counts and every fragment's buffer index to
// the engine's registration.
func (*Wire) CheckEngine(info *wire.EngineInfo, _ any, v wire.View) error {
	if err := checkEngineBuffers(info, v); err != nil {
		return err
	}
	return v.FragmentsFit(info)
}

func (*Wire) EngineMismatch(v wire.View) error {
	return wire.Errorf(wire.CodeWireMismatch, "the engine registered a cache contract, but the plan (%s) is for the v1 wire: register its KV and state buffer pointers (kvDataPtrs, stateDataPtrs), or publish a contract pair (spec.wire: CacheContract)",
		wire.ShortHash(v.PlanHash()))
}

// checkEngineBuffers compares the engine's buffer counts with the layout
// its plan was made for: prefill ranks index the registered pointers by the
// plan's buffer numbers, so a different count would move bytes to the
// wrong place.
func checkEngineBuffers(info *wire.EngineInfo, v wire.View) error {
	kv, state := len(v.Layout().DecodeKVItemLens), len(v.Layout().DecodeStateItemLens)
	if len(info.KVDataPtrs) != kv || len(info.StateDataPtrs) != state {
		return &wire.Error{Code: wire.CodeInvalidArgument, Message: fmt.Sprintf(
			"the engine registers %d KV and %d state buffers but the plan (%s) was made for %d KV and %d state buffers",
			len(info.KVDataPtrs), len(info.StateDataPtrs), wire.ShortHash(v.PlanHash()), kv, state)}
	}
	return nil
}

func (*Wire) DecodeAnswer(body []byte) (any, error) {
	p, err := kvv1.DecodeParallelInfo(body)
	return &p, err
}

func (*Wire) CheckAnswer(_ wire.Host, v wire.View, addr string, answer any) (*wire.PrefillInfo, *wire.RoomFailure) {
	ans := answer.(*kvv1.ParallelInfo)
	if err := checkLayout(ans, *v.Layout()); err != nil {
		return nil, &wire.RoomFailure{Reason: wire.ReasonLayoutMismatch, Message: fmt.Sprintf("prefill at %s does not match the layout the plan was made for (plan %s): %v", addr, wire.ShortHash(v.PlanHash()), err)}
	}
	return &wire.PrefillInfo{TPSize: ans.PrefillTPSize, DPSize: ans.PrefillDPSize}, nil
}

func (*Wire) AnswerMismatch(v wire.View, addr string) *wire.RoomFailure {
	return &wire.RoomFailure{Reason: wire.ReasonWireMismatch, Message: fmt.Sprintf(
		"the bootstrap server at %s answered the cache-contract wire (cache_layout), but the plan (%s) is for the v1 wire: this prefill runs a tokenspeed with the cache contract; publish a contract pair (spec.wire: CacheContract); nothing was sent to it",
		addr, wire.ShortHash(v.PlanHash()))}
}

func (*Wire) RegistrationFrames(h wire.Host, _ wire.View, eng *wire.EngineInfo, _ any) [][]byte {
	reg := kvv1.Registration{
		DecodeIP: h.AdvertiseHost(), DecodeStatusPort: h.StatusPort(), SessionID: eng.SessionID,
		KVPtrs: eng.KVDataPtrs, StatePtrs: eng.StateDataPtrs,
	}
	return reg.Frames()
}

// Probe is GET /health: on the v1 wire a prefill's answer does not change
// under a room.
func (*Wire) Probe(ctx context.Context, h wire.Host, addr string, _ *wire.PrefillInfo) (*wire.RoomFailure, error) {
	return nil, h.Health(ctx, addr)
}

// CheckRequest rejects a payload a prefill rank would not parse, or would
// use to index outside its arrays (numpy takes a negative index from the
// end: a transfer to the wrong page rather than an error).
func (w *Wire) CheckRequest(h wire.Host, e wire.Room, req *wire.TransferRequest) error {
	if req.Manifest != nil {
		return wire.Errorf(wire.CodeWireMismatch, "room %d is on the v1 wire: its request is page indices (kvIndices, auxIndex), not a block manifest", e.RoomID())
	}
	for _, list := range [...]struct {
		name    string
		indices []int64
	}{{"kvIndices", req.KVIndices}, {"mambaIndices", req.MambaIndices}} {
		for i, v := range list.indices {
			if v < 0 {
				return wire.Errorf(wire.CodeInvalidArgument, "room %d's request: %s[%d] is %d; page and slot indices are non-negative", e.RoomID(), list.name, i, v)
			}
		}
	}
	q := w.request(h, e, e.RouteView().Target(0), req)
	q.Dummy = false
	if err := q.Validate(); err != nil {
		return wire.Errorf(wire.CodeInvalidArgument, "room %d's request: %v", e.RoomID(), err)
	}
	return nil
}

// SendRequest sends each real target the room's request with its
// fragments, each dummy an empty one.
func (w *Wire) SendRequest(h wire.Host, e wire.Room, req *wire.TransferRequest) {
	v := e.RouteView()
	for i := range v.NumSends() {
		t := v.Target(i)
		q := w.request(h, e, t, req)
		frames := q.AppendFrames(make([][]byte, 0, kvv1.RequestFramesWithFragments), w.fragments[i])
		if err := h.Push().Send(e.Endpoint(i), frames); err != nil {
			h.FailRoom(e, wire.ReasonSendFailed, fmt.Sprintf("could not send room %d's request to prefill TP rank %d (dp group %d of %s): %v", e.RoomID(), t.Rank, e.DPGroup(), e.BootstrapAddr(), err))
			return
		}
	}
}

func (*Wire) request(h wire.Host, e wire.Room, t wire.Target, req *wire.TransferRequest) kvv1.Request {
	q := kvv1.Request{
		Room: e.RoomID(), DecodeIP: h.AdvertiseHost(), DecodeStatusPort: h.StatusPort(), SessionID: e.Session(),
		RequiredDstInfoNum: t.DstInfo, Dummy: t.Dummy,
	}
	if !t.Dummy {
		q.KVIndices, q.AuxIndex, q.DecodePrefixLen, q.MambaIndices = req.KVIndices, req.AuxIndex, req.DecodePrefixLen, req.MambaIndices
	}
	return q
}

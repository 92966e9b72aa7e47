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
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/testutil"
)

const (
	answerWithin = 2 * time.Second
	silenceFor   = 150 * time.Millisecond
)

func TestIdentityRoomSucceeds(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 1, Buffers: p2Buffers, Default: Success(128000, 11, 12)})
	d := newDecodeRank(t, "127.0.0.1:15500")
	r := p.Rank(0)
	d.register(r, 2, 0)
	q := d.request(7301, 1, nil)
	d.sendRequest(r, q)

	got := d.recvStatus(answerWithin)
	want := kvwire.Status{Room: 7301, State: kvwire.Success, PrefillTPRank: 0, BootstrapToken: 128000, SpecCandidateIDs: []int32{11, 12}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("status %+v, want %+v", got, want)
	}
	if reqs := r.Requests(); len(reqs) != 1 || !reflect.DeepEqual(reqs[0], q) {
		t.Fatalf("recorded requests %+v, want [%+v]", reqs, q)
	}
	regs := r.Registrations()
	if len(regs) != 1 || regs[0].SessionID != d.session || regs[0].DecodeStatusPort != d.port || len(regs[0].KVPtrs) != 2 {
		t.Fatalf("registrations %+v", regs)
	}
	testutil.Eventually(t, 2*time.Second, "the sent status to be recorded", func() error { return errUnless(r.Counts().StatusesSent == 1) })
	if c := r.Counts(); c != (RankCounts{Registrations: 1, Requests: 1, RoomsCompleted: 1, StatusesSent: 1}) {
		t.Fatalf("counts %+v", c)
	}
	if sent := r.Sent(); sent[0].Endpoint != kvwire.Endpoint("127.0.0.1", d.port) || !reflect.DeepEqual(sent[0].Status, want) {
		t.Fatalf("sent %+v", sent)
	}
}

func TestRoomWaitsForRequiredDstInfoNum(t *testing.T) {
	noLeaks(t)
	// One prefill rank feeding two decode ranks (MLA P1→D2): each request
	// says required_dst_info_num 2, and both decode ranks get the status.
	p := startPeer(t, Config{WorldSize: 1, Default: Success(5)})
	r := p.Rank(0)
	d0, d1 := newDecodeRank(t, "127.0.0.1:15500"), newDecodeRank(t, "127.0.0.1:15501")
	d0.register(r, 1, 0)
	d1.register(r, 1, 0)
	d0.sendRequest(r, d0.request(9, 2, nil))
	d0.expectSilence(silenceFor)
	// The same session again replaces its request; it does not count twice.
	d0.sendRequest(r, d0.request(9, 2, nil))
	d0.expectSilence(silenceFor)
	d1.sendRequest(r, d1.request(9, 2, nil))
	for _, d := range []*decodeRank{d0, d1} {
		if s := d.recvStatus(answerWithin); s.Room != 9 || s.State != kvwire.Success || s.BootstrapToken != 5 {
			t.Fatalf("%s: %+v", d.session, s)
		}
	}
}

func TestFragmentsMatchingTheLayoutSucceed(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 2, Buffers: p2Buffers})
	d := newDecodeRank(t, "127.0.0.1:15500")
	for _, r := range p.Ranks() {
		d.register(r, 2, 0)
		d.sendRequest(r, d.request(1, 1, fragments(r.TPRank)))
	}
	got := []int{d.recvStatus(answerWithin).PrefillTPRank, d.recvStatus(answerWithin).PrefillTPRank}
	slices.Sort(got)
	if !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("statuses from TP ranks %v", got)
	}
	for _, r := range p.Ranks() {
		if errs := r.Errors(); len(errs) > 0 {
			t.Fatalf("rank %d: %v", r.EngineRank, errs)
		}
		if f := r.Requests()[0].Fragments; !reflect.DeepEqual(f, fragments(r.TPRank)) {
			t.Fatalf("rank %d decoded fragments %+v", r.EngineRank, f)
		}
	}
}

func TestFragmentsOutsideTheLayoutFailTheRoom(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(f *transferplan.TransferFragment)
		reason ErrorReason
	}{
		{"other source rank", func(f *transferplan.TransferFragment) { f.SrcRank = 1 }, ReasonFragmentSrcRank},
		{"unknown buffer", func(f *transferplan.TransferFragment) { f.BufferIndex = 2 }, ReasonFragmentBuffer},
		{"state buffer it lacks", func(f *transferplan.TransferFragment) { f.BufferKind = transferplan.MambaState }, ReasonFragmentBuffer},
		{"wrong stride", func(f *transferplan.TransferFragment) { f.SrcPageStrideBytes = 4096 }, ReasonFragmentStride},
		{"past the item", func(f *transferplan.TransferFragment) { f.SrcByteOffset = 256 }, ReasonFragmentOutsideItem},
		{"empty range", func(f *transferplan.TransferFragment) { f.BytesPerPage = 0 }, ReasonFragmentOutsideItem},
		{"half a unit", func(f *transferplan.TransferFragment) { f.SrcByteOffset, f.BytesPerPage = 128, 256 }, ReasonFragmentUnitAlignment},
		{"two decode ranks", func(f *transferplan.TransferFragment) { f.DstRank = 1 }, ReasonFragmentDstRank},
	}
	p := startPeer(t, Config{WorldSize: 2, Buffers: p2Buffers, Default: Success(1)})
	r := p.Rank(0)
	d := newDecodeRank(t, "127.0.0.1:15500")
	d.register(r, 2, 0)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			frags := fragments(0)
			c.edit(&frags[1])
			room := int64(100 + i)
			d.sendRequest(r, d.request(room, 1, frags))
			if s := d.recvStatus(answerWithin); s.Room != room || s.State != kvwire.Failed {
				t.Fatalf("status %+v, want Failed for room %d", s, room)
			}
			errs := r.Errors()
			last := errs[len(errs)-1]
			if last.Room != room || last.Reason != c.reason {
				t.Fatalf("last error %v, want %s for room %d", last, c.reason, room)
			}
		})
	}
}

func TestRegistrationPointerCountFailsRooms(t *testing.T) {
	p := startPeer(t, Config{WorldSize: 1, Buffers: p2Buffers})
	r := p.Rank(0)
	d := newDecodeRank(t, "127.0.0.1:15500")
	d.register(r, 3, 0) // three kv pointers for two buffers
	d.sendRequest(r, d.request(1, 1, nil))
	if s := d.recvStatus(answerWithin); s.State != kvwire.Failed {
		t.Fatalf("status %+v", s)
	}
	if errs := r.Errors(); len(errs) != 1 || errs[0].Reason != ReasonPointerCount || errs[0].Room != NoRoom {
		t.Fatalf("errors %v", errs)
	}
}

func TestBehaviours(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 2})
	d := newDecodeRank(t, "127.0.0.1:15500")
	for _, r := range p.Ranks() {
		d.register(r, 1, 0)
	}
	send := func(room int64) {
		for _, r := range p.Ranks() {
			d.sendRequest(r, d.request(room, 1, nil))
		}
	}

	p.Script(1, Failure())
	send(1)
	for range 2 {
		if s := d.recvStatus(answerWithin); s.State != kvwire.Failed || s.BootstrapToken != kvwire.NoBootstrapToken || s.SpecCandidateIDs != nil {
			t.Fatalf("failure: %+v", s)
		}
	}

	p.Script(2, Success(7).After(300*time.Millisecond))
	start := time.Now()
	send(2)
	d.recvStatus(answerWithin)
	d.recvStatus(answerWithin)
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Fatalf("delayed answer after %v", took)
	}

	// One rank fails, the other succeeds.
	p.ScriptRank(3, 1, Failure())
	send(3)
	byRank := map[int]kvwire.TransferPoll{}
	for range 2 {
		s := d.recvStatus(answerWithin)
		byRank[s.PrefillTPRank] = s.State
	}
	if byRank[0] != kvwire.Success || byRank[1] != kvwire.Failed {
		t.Fatalf("per-rank script: %v", byRank)
	}

	p.Script(4, Silence())
	send(4)
	d.expectSilence(silenceFor)
	if c := p.Rank(0).Counts(); c.RoomsCompleted != 4 {
		t.Fatalf("completed %d", c.RoomsCompleted)
	}

	p.SetDefault(Death())
	send(5)
	select {
	case <-p.Dead():
	case <-time.After(answerWithin):
		t.Fatal("the peer did not die")
	}
	d.expectSilence(silenceFor)
}

func TestDummies(t *testing.T) {
	noLeaks(t)
	p := startPeer(t, Config{WorldSize: 1})
	r := p.Rank(0)
	d0, d1 := newDecodeRank(t, "127.0.0.1:15500"), newDecodeRank(t, "127.0.0.1:15501")
	d0.register(r, 1, 0)
	d1.register(r, 1, 0)

	// A dummy alone: done, no status (the reference marks it Success locally).
	d0.sendRequest(r, d0.dummy(1, 1))
	d0.expectSilence(silenceFor)
	testutil.Eventually(t, 2*time.Second, "the dummy room to complete", func() error { return errUnless(r.Counts().RoomsCompleted == 1) })

	// A dummy with a real request under required 2: the reference waits for
	// two real ones forever. The peer says so.
	d0.sendRequest(r, d0.dummy(2, 2))
	d1.sendRequest(r, d1.request(2, 2, nil))
	d1.expectSilence(silenceFor)
	errs := r.Errors()
	if len(errs) != 1 || errs[0].Reason != ReasonNeverAnswers || errs[0].Room != 2 {
		t.Fatalf("errors %v", errs)
	}
	if c := r.Counts(); c.Dummies != 2 || c.Requests != 3 {
		t.Fatalf("counts %+v", c)
	}
}

func TestUnregisteredSessionIsSilent(t *testing.T) {
	p := startPeer(t, Config{WorldSize: 1})
	r := p.Rank(0)
	d := newDecodeRank(t, "127.0.0.1:15500")
	d.sendRequest(r, d.request(1, 1, nil))
	d.expectSilence(silenceFor)
	if errs := r.Errors(); len(errs) != 1 || errs[0].Reason != ReasonUnregisteredSession || errs[0].Room != 1 {
		t.Fatalf("errors %v", errs)
	}
}

func TestMalformedMessagesAreRecorded(t *testing.T) {
	p := startPeer(t, Config{WorldSize: 1})
	r := p.Rank(0)
	d := newDecodeRank(t, "127.0.0.1:15500")
	q := d.request(42, 1, nil)
	bad := q.Frames()
	bad[5] = []byte("None") // aux_index the reference cannot int()
	d.send(r.Endpoint, bad)
	d.send(r.Endpoint, [][]byte{[]byte("None"), []byte("x")})
	d.send(r.Endpoint, [][]byte{[]byte("garbage")})
	testutil.Eventually(t, 2*time.Second, "three errors", func() error { return errUnless(r.Counts().Errors == 3) })
	errs := r.Errors()
	wantReasons := []kvwire.Reason{kvwire.ReasonNotAnInteger, kvwire.ReasonFrameCount, kvwire.ReasonFrameCount}
	for i, e := range errs {
		if e.Reason != ReasonMalformedMessage || kvwire.ReasonOf(e) != wantReasons[i] {
			t.Fatalf("error %d: %v (kvwire reason %s), want %s", i, e, kvwire.ReasonOf(e), wantReasons[i])
		}
	}
	if errs[0].Room != 42 || errs[1].Room != NoRoom {
		t.Fatalf("rooms %d %d", errs[0].Room, errs[1].Room)
	}
	// The rank keeps serving.
	d.register(r, 1, 0)
	d.sendRequest(r, q)
	d.recvStatus(answerWithin)
}

func TestDPGroupsAnswerWithTPRankInGroup(t *testing.T) {
	p := startPeer(t, Config{WorldSize: 4, DPSize: 2})
	d := newDecodeRank(t, "127.0.0.1:15500")
	r := p.RankOf(1, 1)
	d.register(r, 1, 0)
	d.sendRequest(r, d.request(3, 1, nil))
	if s := d.recvStatus(answerWithin); s.PrefillTPRank != 1 || s.Room != 3 {
		t.Fatalf("status %+v", s)
	}
}

func TestKeepRequestsBoundsMemory(t *testing.T) {
	p := startPeer(t, Config{WorldSize: 1, KeepRequests: 3, Default: Silence()})
	r := p.Rank(0)
	d := newDecodeRank(t, "127.0.0.1:15500")
	d.register(r, 1, 0)
	for room := range int64(10) {
		d.sendRequest(r, d.request(room, 1, nil))
	}
	testutil.Eventually(t, 2*time.Second, "ten requests", func() error { return errUnless(r.Counts().Requests == 10) })
	var rooms []int64
	for _, q := range r.Requests() {
		rooms = append(rooms, q.Room)
	}
	if !slices.Equal(rooms, []int64{7, 8, 9}) {
		t.Fatalf("kept rooms %v", rooms)
	}
}

func TestConfigForPlannedLayout(t *testing.T) {
	l := planv1.Layout{
		Attention: transferplan.MHA, TokensPerPage: 1,
		Prefill: transferplan.Parallelism{TPSize: 8, DPSize: 2}, Decode: transferplan.Parallelism{TPSize: 4, DPSize: 1},
		KVBuffers: []planv1.BufferSpec{
			{Kind: transferplan.TargetK, PrefillItemBytes: 256, DecodeItemBytes: 512, PrefillUnitBytes: 256, DecodeUnitBytes: 256},
			{Kind: transferplan.TargetV, PrefillItemBytes: 256, DecodeItemBytes: 512, PrefillUnitBytes: 256, DecodeUnitBytes: 256},
		},
		StateBuffers: []planv1.BufferSpec{{Kind: transferplan.MambaState, PrefillItemBytes: 64, DecodeItemBytes: 64}},
	}
	got := ConfigFor(l)
	want := Config{WorldSize: 8, DPSize: 2, Buffers: kvv1.BufferLens{
		KVItemLens: []int64{256, 256}, KVUnitLens: []int64{256, 256}, StateItemLens: []int64{64}, StateUnitLens: []int64{1},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

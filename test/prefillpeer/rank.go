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
	"errors"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// pollInterval bounds how long a rank's receive loop takes to notice that it
// must stop; it costs nothing while messages flow.
const pollInterval = 20 * time.Millisecond

// Rank is one prefill rank: its PULL endpoint, the decode sessions and rooms
// it tracks, and what it has seen.
type Rank struct {
	// EngineRank is the rank in the whole prefill world; DPGroup and TPRank
	// (within the group) are where the bootstrap server files it.
	EngineRank int
	DPGroup    int
	TPRank     int
	// Endpoint is where its PULL socket listens: tcp://host:port.
	Endpoint string
	Port     int

	buffers kvv1.BufferLens
	pull    *zmq.Socket
	push    pushCache // owned by the receive goroutine
	delayed *delayedSender
	script  *script
	die     func()
	frags   fragmentCache
	rec     recorder
	check   *transferCheck // nil unless Config.Transfer
	// wire is what the rank does on its peer's wire (v1Rank, contractRank).
	wire rankWire

	// Owned by the receive goroutine, like the reference's bootstrap thread.
	sessions map[string]session
	rooms    map[int64]map[string]destination

	stopping atomic.Bool
	done     chan struct{}
}

// session is a registered decode rank's memory, and what is wrong with it.
type session struct {
	registration kvv1.Registration
	problem      *RankError
}

// destination is one decode rank's request for a room (the reference's
// TransferInfo, reduced to what answering needs).
type destination struct {
	dummy    bool
	endpoint string
	problem  *RankError
}

func newRank(zctx *zmq.Context, cfg *Config, w peerWire, engineRank int, sc *script, die func()) (*Rank, error) {
	tpPerDP := cfg.WorldSize / cfg.DPSize
	r := &Rank{
		EngineRank: engineRank, DPGroup: engineRank / tpPerDP, TPRank: engineRank % tpPerDP,
		buffers: cfg.buffers(engineRank), script: sc, die: die,
		rec:      recorder{keep: cfg.KeepRequests, logf: cfg.Logf},
		sessions: map[string]session{}, rooms: map[int64]map[string]destination{},
		done: make(chan struct{}),
	}
	r.frags = fragmentCache{rank: r, entries: map[string]*fragmentCheck{}}
	var err error
	if r.wire, err = w.newRank(cfg, engineRank); err != nil {
		return nil, err
	}
	pull, port, err := zmqsock.BindPull(zctx, cfg.Host, 0, append([]zmqsock.Option{zmqsock.RecvTimeout(pollInterval)}, cfg.pullOptions()...)...)
	if err != nil {
		return nil, err
	}
	r.pull, r.Port, r.Endpoint = pull, port, kvwire.Endpoint(cfg.Host, port)
	onError := func(room int64, detail string, err error) {
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: room, Reason: ReasonStatusNotSent, Detail: detail, Err: err})
	}
	r.push = pushCache{zctx: zctx, opts: cfg.pushOptions(), onSent: r.rec.sentStatus, onError: onError}
	r.delayed = newDelayedSender(pushCache{zctx: zctx, opts: cfg.pushOptions(), onSent: r.rec.sentStatus, onError: onError})
	go r.serve()
	return r, nil
}

// maxRequestFrames and maxRequestBytes bound what a rank reads of one
// message: far more than any request, registration or manifest.
const (
	maxRequestFrames = 1 << 10
	maxRequestBytes  = 256 << 20
)

// serve is the reference's bootstrap thread: receive, parse, file.
func (r *Rank) serve() {
	runtime.LockOSThread() // a ZMQ socket stays on one thread
	defer runtime.UnlockOSThread()
	defer close(r.done)
	defer r.pull.Close()
	defer r.push.close()
	rx := zmqsock.NewReceiver(r.pull, maxRequestFrames, maxRequestBytes)
	defer rx.Close()
	for !r.stopping.Load() {
		msg, _, err := rx.Recv(0, false)
		var big *zmqsock.OversizeError
		switch {
		case err == nil:
			r.handle(msg)
		case errors.As(err, &big):
			r.rec.error(&RankError{EngineRank: r.EngineRank, Room: -1, Reason: ReasonMalformedMessage, Detail: big.Error(), Err: err})
		case zmqsock.Retry(err):
		default:
			return // the context is going away
		}
	}
}

func (r *Rank) handle(msg [][]byte) { r.wire.handle(r, msg) }

// handleV1 takes a message of the v1 wire: a registration or a request.
func (r *Rank) handleV1(msg [][]byte) {
	if kvwire.IsRegistration(msg) {
		r.register(msg)
		return
	}
	r.frags.last = nil
	q, err := kvv1.DecodeRequestWith(msg, r.frags.decode)
	if err != nil {
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: roomOf(msg), Reason: ReasonMalformedMessage, Detail: err.Error(), Err: err})
		return
	}
	var problem *RankError
	if f := r.frags.last; f != nil && !q.Dummy {
		for _, p := range f.problems {
			e := *p
			e.Room = q.Room
			r.rec.error(&e)
			if problem == nil {
				problem = &e
			}
		}
	}
	if r.check != nil && !q.Dummy && problem == nil {
		if problem = r.check.check(r, &q); problem != nil {
			r.rec.error(problem)
		}
	}
	if !q.Dummy {
		if s, ok := r.sessions[q.SessionID]; !ok {
			problem = &RankError{EngineRank: r.EngineRank, Room: q.Room, Reason: ReasonUnregisteredSession,
				Detail: "request from session " + q.SessionID + ", which has not registered its memory"}
			r.rec.error(problem)
		} else if s.problem != nil && problem == nil {
			problem = s.problem
		}
	}
	r.rec.request(q)
	r.collect(&q, problem)
}

func (r *Rank) register(msg [][]byte) {
	g, err := kvv1.DecodeRegistration(msg)
	if err != nil {
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: NoRoom, Reason: ReasonMalformedMessage, Detail: err.Error(), Err: err})
		return
	}
	problem := r.checkPointers(&g)
	if problem != nil {
		r.rec.error(problem)
	}
	r.sessions[g.SessionID] = session{registration: g, problem: problem}
	r.rec.registration(g)
}

// collect files a request under its room and session, as the reference
// does, and answers the room once required_dst_info_num sessions are in.
func (r *Rank) collect(q *kvv1.Request, problem *RankError) {
	infos := r.rooms[q.Room]
	if infos == nil {
		infos = make(map[string]destination, q.RequiredDstInfoNum)
		r.rooms[q.Room] = infos
	}
	infos[q.SessionID] = destination{dummy: q.Dummy, endpoint: statusEndpoint(q.DecodeIP, q.DecodeStatusPort), problem: problem}
	if len(infos) != q.RequiredDstInfoNum {
		return
	}
	delete(r.rooms, q.Room)
	r.rec.roomCompleted()
	r.answer(q.Room, q.RequiredDstInfoNum, infos)
}

// answer runs the room's script. Like the reference, a room whose requests
// are all dummies is done without a word, and statuses go to every non-dummy
// decode rank only when their number is required_dst_info_num.
func (r *Rank) answer(room int64, required int, infos map[string]destination) {
	var real []string
	var problem *RankError
	for _, d := range infos {
		if !d.dummy {
			real = append(real, d.endpoint)
			if problem == nil {
				problem = d.problem
			}
		}
	}
	if len(real) == 0 {
		return
	}
	if len(real) != required {
		r.rec.error(&RankError{EngineRank: r.EngineRank, Room: room, Reason: ReasonNeverAnswers,
			Detail: strconv.Itoa(len(real)) + " real and " + strconv.Itoa(len(infos)-len(real)) + " dummy requests for required_dst_info_num " + strconv.Itoa(required) + ": the reference waits for that many real ones and never answers"})
		return
	}
	b := r.script.lookup(room, r.EngineRank)
	switch {
	case problem != nil && problem.Reason == ReasonUnregisteredSession:
		return // the reference's transfer thread dies on it: silence
	case problem != nil && b.Action != Die:
		// Where the reference would write to the wrong place, fail the
		// room so that the decode side notices.
		b = Failure().After(b.Delay)
	}
	r.play(room, real, b)
}

// play runs behaviour b for room: statuses to every endpoint (now, or
// after the delay from the delayed sender), silence, or the peer's death.
func (r *Rank) play(room int64, endpoints []string, b Behavior) {
	switch b.Action {
	case Silent:
	case Die:
		r.later(b.Delay, r.die)
	default:
		st := b.status(room, r.TPRank)
		if b.Delay <= 0 {
			for _, ep := range endpoints {
				r.push.send(outgoing{endpoint: ep, status: st})
			}
			return
		}
		time.AfterFunc(b.Delay, func() {
			for _, ep := range endpoints {
				if !r.delayed.enqueue(outgoing{endpoint: ep, status: st}) {
					return
				}
			}
		})
	}
}

// later runs f now, or after d on a timer.
func (r *Rank) later(d time.Duration, f func()) {
	if d <= 0 {
		f()
		return
	}
	time.AfterFunc(d, f)
}

// stop closes the rank's sockets; queued statuses are dropped.
func (r *Rank) stop() {
	r.stopping.Store(true)
	<-r.done
	r.delayed.close()
}

func roomOf(msg [][]byte) int64 {
	if len(msg) > 0 {
		if v, err := strconv.ParseInt(string(msg[0]), 10, 64); err == nil {
			return v
		}
	}
	return NoRoom
}

// Counts returns exact totals of what the rank has seen and done.
func (r *Rank) Counts() RankCounts {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return r.rec.n
}

// Registrations returns the registrations received, in order.
func (r *Rank) Registrations() []kvv1.Registration {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return append([]kvv1.Registration(nil), r.rec.regs...)
}

// ContractRegistrations returns the registrations received on the contract
// wire, in order, with the rank's verdicts (contracts not kept).
func (r *Rank) ContractRegistrations() []ContractRegistration {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return append([]ContractRegistration(nil), r.rec.contractRegs...)
}

// PreAllocations returns the most recent pre-allocations received on the
// contract wire (Config.KeepRequests), manifests not kept, in order.
func (r *Rank) PreAllocations() []kvcontract.PreAllocation {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return r.rec.preAllocs.snapshot()
}

// Requests returns the most recent requests received (Config.KeepRequests),
// decoded, fragments included, in arrival order.
func (r *Rank) Requests() []kvv1.Request {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return r.rec.reqs.snapshot()
}

// Errors returns the most recent errors the rank found, in order.
func (r *Rank) Errors() []*RankError {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return r.rec.errs.snapshot()
}

// Sent returns the most recent statuses the rank sent, in order.
func (r *Rank) Sent() []SentStatus {
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	return r.rec.sent.snapshot()
}

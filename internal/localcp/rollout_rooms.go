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

package localcp

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
)

// roomTarget is one prefill instance a decode pod's rooms go to, and what
// its rooms must end in.
type roomTarget struct {
	Prefill   string // "P8"
	Bootstrap string // the instance's bootstrap address
	// Refusal, when set, is the failure code every room must end in
	// (a layout the pair never described); otherwise every room must
	// succeed.
	Refusal string
	// RefusalSays are texts the refusal's message must hold.
	RefusalSays []string
	// Limit, when positive, is how many rooms go to the target at most.
	Limit int64
}

// RoomCount is what the rooms from one prefill instance to one decode pod
// ended in.
type RoomCount struct {
	Prefill, Pod, Decode string // "P8", the pod's name, "TP4"
	Expect               string // "ok" or the refusal code
	OK                   int64
	// Failed counts the other outcomes by failure code; Messages holds
	// the last message of each.
	Failed   map[string]int64
	Messages map[string]string
	// Refused counts the rooms that ended in the expected refusal with a
	// message saying what it must.
	Refused int64
}

// Rooms is every room that ended, refusals included.
func (c RoomCount) Rooms() int64 {
	n := c.OK + c.Refused
	for _, v := range c.Failed {
		n += v
	}
	return n
}

// Bad is how many rooms ended otherwise than the target wants.
func (c RoomCount) Bad() int64 {
	n := int64(0)
	for _, v := range c.Failed {
		n += v
	}
	if c.Expect != "ok" {
		n += c.OK
	}
	return n
}

// podDriver is one decode pod's engine: every room joins all its ranks
// (each through its own unix socket) against one prefill instance, as the
// ranks of one decode instance serve the same request; rooms go to the
// active targets in turn, one every roomInterval.
type podDriver struct {
	pod, decode string
	agent       *podAgent
	engine      map[int]rankEngine

	mu      sync.Mutex
	targets []*roomTarget
	counts  map[*roomTarget]*RoomCount
	sent    map[*roomTarget]int64

	stopRooms context.CancelFunc
	done      chan struct{}
}

func newPodDriver(agent *podAgent, decodeTP int, engine map[int]rankEngine) *podDriver {
	return &podDriver{pod: agent.Pod.Name, decode: "TP" + strconv.Itoa(decodeTP), agent: agent, engine: engine,
		counts: map[*roomTarget]*RoomCount{}, sent: map[*roomTarget]int64{}}
}

// add makes t a target of the pod's next rooms.
func (d *podDriver) add(t *roomTarget) {
	d.mu.Lock()
	defer d.mu.Unlock()
	expect := "ok"
	if t.Refusal != "" {
		expect = t.Refusal
	}
	d.targets = append(d.targets, t)
	d.counts[t] = &RoomCount{Prefill: t.Prefill, Pod: d.pod, Decode: d.decode, Expect: expect,
		Failed: map[string]int64{}, Messages: map[string]string{}}
}

// remove sends no more rooms to t (its counts stay).
func (d *podDriver) remove(t *roomTarget) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.targets = slices.DeleteFunc(d.targets, func(x *roomTarget) bool { return x == t })
}

// Counts are the pod's rooms per target, in the order they were added.
func (d *podDriver) Counts() []RoomCount {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []RoomCount
	for _, c := range d.counts {
		cp := *c
		cp.Failed, cp.Messages = maps.Clone(c.Failed), maps.Clone(c.Messages)
		out = append(out, cp)
	}
	slices.SortStableFunc(out, func(a, b RoomCount) int { return strings.Compare(a.Prefill, b.Prefill) })
	return out
}

// count is target t's rooms so far.
func (d *podDriver) count(t *roomTarget) RoomCount {
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.counts[t]
}

// start registers every rank's engine and drives rooms until stop.
func (d *podDriver) start() {
	ctx, cancel := context.WithCancel(context.Background())
	d.stopRooms, d.done = cancel, make(chan struct{})
	clients := map[int]*agentclient.Client{}
	for _, r := range d.agent.Ranks {
		clients[r] = agentclient.New(filepath.Join(d.agent.Sockets, "rank-"+strconv.Itoa(r)+".sock"), agentclient.Options{})
	}
	go func() {
		defer close(d.done)
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		tick := time.NewTicker(roomInterval)
		defer tick.Stop()
		for room := int64(1); ctx.Err() == nil; room++ {
			if t := d.next(); t != nil {
				code, msg := d.room(ctx, clients, t, room)
				d.record(ctx, t, code, msg)
			}
			select {
			case <-ctx.Done():
			case <-tick.C:
			}
		}
	}()
}

// next is the target of the next room: the active ones in turn.
func (d *podDriver) next() *roomTarget {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.targets = slices.DeleteFunc(d.targets, func(t *roomTarget) bool { return t.Limit > 0 && d.sent[t] >= t.Limit })
	if len(d.targets) == 0 {
		return nil
	}
	var t *roomTarget
	for _, c := range d.targets { // the one that had the fewest rooms
		if t == nil || d.sent[c] < d.sent[t] {
			t = c
		}
	}
	d.sent[t]++
	return t
}

// room runs one room on every rank at once and names its outcome: success
// when every rank succeeded, else the first rank's failure (in rank order).
func (d *podDriver) room(ctx context.Context, clients map[int]*agentclient.Client, t *roomTarget, room int64) (code, msg string) {
	codes, msgs := make([]string, len(d.agent.Ranks)), make([]string, len(d.agent.Ranks))
	var wg sync.WaitGroup
	for i, r := range d.agent.Ranks {
		wg.Go(func() {
			c, e := clients[r], d.engine[r]
			if err := c.RegisterEngine(ctx, e.info); err != nil { // the same values again are fine
				codes[i], msgs[i] = "register-"+clientErrorKind(err), err.Error()
				return
			}
			codes[i], msgs[i] = roomOutcome(ctx, c, t.Bootstrap, room, e.req)
		})
	}
	wg.Wait()
	for i := range codes {
		if codes[i] != "success" {
			return codes[i], fmt.Sprintf("engine rank %d: %s", d.agent.Ranks[i], msgs[i])
		}
	}
	return "success", ""
}

// roomOutcome runs room to the end on one rank: its outcome as oneRoom
// names it, with the agent's failure message.
func roomOutcome(ctx context.Context, c *agentclient.Client, bootstrap string, room int64, req agentclient.Request) (string, string) {
	defer func() { _ = c.Clear(context.WithoutCancel(ctx), room) }()
	if _, err := c.Open(ctx, bootstrap, room); err != nil {
		return clientErrorKind(err), err.Error()
	}
	// A room the agent already failed (a prefill it refuses, known from an
	// earlier room) refuses the request; the engine learns why by polling.
	if _, err := c.Request(ctx, room, req); err != nil && clientErrorKind(err) != "refused-"+string(receiver.CodeRoomFinished) {
		return clientErrorKind(err), err.Error()
	}
	r, err := c.Wait(ctx, room, roomWait)
	switch {
	case err != nil:
		return clientErrorKind(err), err.Error()
	case r.Status == receiver.Success:
		return "success", ""
	case r.Status == receiver.Failed:
		return r.FailureCode, r.FailureMessage
	default:
		return "stuck-" + r.Status.String(), ""
	}
}

func (d *podDriver) record(ctx context.Context, t *roomTarget, code, msg string) {
	if ctx.Err() != nil {
		return // cut short by stop: not a result
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.counts[t]
	switch {
	case code == "success":
		c.OK++
	case code == t.Refusal && says(msg, t.RefusalSays):
		c.Refused++
		c.Messages[code] = msg
	default:
		c.Failed[code]++
		c.Messages[code] = msg
	}
}

func says(msg string, texts []string) bool {
	for _, s := range texts {
		if !strings.Contains(msg, s) {
			return false
		}
	}
	return true
}

// stop ends the rooms (a room under way is cut short and not counted).
func (d *podDriver) stop() {
	if d.stopRooms != nil {
		d.stopRooms()
		<-d.done
		d.stopRooms = nil
	}
}

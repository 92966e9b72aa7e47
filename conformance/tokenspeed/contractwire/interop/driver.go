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

package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

const host = "127.0.0.1"

// session is one decode rank: its status socket and its plan.
type session struct {
	rank             int
	id               string
	pull             *zmq.Socket
	port             int
	targets, dummies map[int]bool
}

type driver struct {
	v         *pairVectors
	bootstrap string
	timeout   time.Duration
	layout    kvcontract.ManifestLayout
	zctx      *zmq.Context
	ranks     []*session
	pushes    map[[2]int]*zmq.Socket // (DP group, prefill TP rank)
	nextPort  int

	registrations, completed int
}

func newDriver(v *pairVectors, bootstrap string, timeout time.Duration) (*driver, error) {
	layout, err := kvcontract.ManifestLayoutFromContract([]byte(v.Decode.Contract))
	if err != nil {
		return nil, err
	}
	zctx, err := zmq.NewContext()
	if err != nil {
		return nil, err
	}
	d := &driver{v: v, bootstrap: bootstrap, timeout: timeout, layout: layout, zctx: zctx, pushes: map[[2]int]*zmq.Socket{}, nextPort: 15500}
	for r := range v.Decode.TPSize {
		s := d.newSession(r)
		for _, t := range v.Ranks[r].Targets {
			s.targets[t] = true
		}
		for _, t := range v.Ranks[r].Dummies {
			s.dummies[t] = true
		}
		d.ranks = append(d.ranks, s)
	}
	return d, nil
}

func (d *driver) newSession(rank int) *session {
	pull, port, err := zmqsock.BindPull(d.zctx, host, 0, zmqsock.RecvTimeout(100*time.Millisecond))
	if err != nil {
		panic(err)
	}
	d.nextPort++
	return &session{rank: rank, id: host + ":" + strconv.Itoa(d.nextPort), pull: pull, port: port, targets: map[int]bool{}, dummies: map[int]bool{}}
}

func (d *driver) close() {
	for _, s := range d.ranks {
		_ = s.pull.Close()
	}
	for _, p := range d.pushes {
		_ = p.Close()
	}
	_ = d.zctx.Term()
}

func (d *driver) registration(s *session) kvcontract.Registration {
	return kvcontract.Registration{DecodeIP: host, DecodeStatusPort: s.port, SessionID: s.id,
		ArenaPtr: 0x7f3a00000000 + uint64(s.rank)<<32, Contract: []byte(d.v.Decode.Contract),
		DecodeTPSize: d.v.Decode.TPSize, DecodeTPRank: s.rank}
}

// register sends the session's registration to its targets and dummies in
// every DP group.
func (d *driver) register(s *session) error {
	reg := d.registration(s)
	if err := reg.Validate(); err != nil {
		return err
	}
	frames := reg.Frames()
	for g := range d.v.Prefill.DPSize {
		for t := range d.v.Prefill.TPSize {
			if !s.targets[t] && !s.dummies[t] {
				continue
			}
			if err := d.send(t, g, frames); err != nil {
				return err
			}
			d.registrations++
		}
	}
	return nil
}

// preAllocate sends the room to the session's targets in the room's DP
// group: the manifest to the real ones, an empty frame to the dummies.
func (d *driver) preAllocate(s *session, room int64, manifest []byte) error {
	g := d.group(room)
	for t := range d.v.Prefill.TPSize {
		if !s.targets[t] && !s.dummies[t] {
			continue
		}
		p := kvcontract.PreAllocation{Room: room, SessionID: s.id}
		if s.targets[t] {
			p.Manifest = manifest
		}
		if err := d.send(t, g, p.Frames()); err != nil {
			return err
		}
	}
	return nil
}

// group is the room's prefill DP group, as the engine's decode picks it.
func (d *driver) group(room int64) int { return int(room % int64(d.v.Prefill.DPSize)) }

// send pushes frames to prefill TP rank t of DP group g, whose address the
// bootstrap server gives.
func (d *driver) send(t, g int, frames [][]byte) error {
	push, ok := d.pushes[[2]int{g, t}]
	if !ok {
		body, err := d.get(kvwire.RoutePath + "?" + kvwire.RankAddressQuery(t, g))
		if err != nil {
			return err
		}
		addr, err := kvwire.DecodeRankAddress(body)
		if err != nil {
			return err
		}
		if push, err = zmqsock.ConnectPush(d.zctx, addr.Endpoint(), zmqsock.SendTimeout(5*time.Second)); err != nil {
			return err
		}
		d.pushes[[2]int{g, t}] = push
	}
	_, err := push.SendMessage(frames)
	return err
}

// collect reads the session's status socket until n prefill ranks have
// answered the room.
func (d *driver) collect(s *session, room int64, n int) ([]kvwire.Status, error) {
	seen := map[int]bool{}
	var out []kvwire.Status
	deadline := time.Now().Add(d.timeout)
	for len(seen) < n {
		if time.Now().After(deadline) {
			return out, fmt.Errorf("decode rank %d room %d: %d of %d prefill ranks answered within %v (%+v)", s.rank, room, len(seen), n, d.timeout, out)
		}
		msg, err := s.pull.RecvMessageBytes(0)
		if err != nil {
			if zmqsock.Retry(err) {
				continue
			}
			return out, err
		}
		st, err := kvwire.DecodeStatus(msg)
		if err != nil {
			return out, fmt.Errorf("a status from the engine does not decode: %w", err)
		}
		if st.Room != room || seen[st.PrefillTPRank] {
			continue
		}
		seen[st.PrefillTPRank] = true
		out = append(out, st)
	}
	return out, nil
}

func (d *driver) get(path string) ([]byte, error) {
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + d.bootstrap + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, kvcontract.MaxParallelInfoBytes))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %.200s", path, resp.Status, body)
	}
	return body, err
}

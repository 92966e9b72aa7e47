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
	"runtime"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvv1 "github.com/pdtopo/pdtopo/pkg/kvwire/v1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// BenchmarkRoomsP8D4 measures whole rooms through the peer for decode rank 0
// of the fragmented Llama-70B-like P8→D4 plan (two prefill sources, 80
// fragments each): per room two requests in, two Success statuses out, with
// up to 256 rooms in flight. The receiver's own benchmarks run against this
// peer, so its cost bounds theirs.
func BenchmarkRoomsP8D4(b *testing.B) {
	l := layout(transferplan.MHA, 8, 1, 4, kvPair(80, 256, 512, 256))
	planner, err := planv1.NewPlanner(l)
	if err != nil {
		b.Fatal(err)
	}
	plan, _ := planner.RoutePlan(0)
	p, err := Start(ConfigFor(l))
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()

	zctx, _ := zmq.NewContext()
	defer zctx.Term()
	pull, port, err := zmqsock.BindPull(zctx, "127.0.0.1", 0, zmqsock.RecvTimeout(pollInterval))
	if err != nil {
		b.Fatal(err)
	}
	session := "127.0.0.1:15500"
	type target struct {
		push  *zmq.Socket
		frags kvv1.FragmentFrames
		req   int
	}
	var targets []target
	for _, tg := range plan.Targets {
		push, err := zmqsock.ConnectPush(zctx, p.Rank(tg.PrefillTPRank).Endpoint)
		if err != nil {
			b.Fatal(err)
		}
		reg := kvv1.Registration{DecodeIP: "127.0.0.1", DecodeStatusPort: port, SessionID: session, KVPtrs: make([]uint64, len(l.KVBuffers))}
		_, _ = push.SendMessage(reg.Frames())
		targets = append(targets, target{push, kvv1.EncodeFragmentFrames(tg.Fragments), tg.RequiredDstInfoNum})
	}
	defer func() {
		for _, t := range targets {
			_ = t.push.Close()
		}
		_ = pull.Close()
	}()

	const window = 256
	credits := make(chan struct{}, window)
	received := make(chan error, 1)
	go func() { // the status reader owns pull
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		want := b.N * len(targets)
		for n := 0; n < want; {
			msg, err := pull.RecvMessageBytes(0)
			if err != nil {
				if zmqsock.Retry(err) {
					continue
				}
				received <- err
				return
			}
			if _, err := kvwire.DecodeStatus(msg); err != nil {
				received <- err
				return
			}
			if n++; n%len(targets) == 0 {
				<-credits
			}
		}
		received <- nil
	}()

	b.ResetTimer()
	start := time.Now()
	frames := make([][]byte, 0, kvv1.RequestFramesWithFragments)
	for room := range int64(b.N) {
		credits <- struct{}{}
		for _, t := range targets {
			q := kvv1.Request{Room: room, DecodeIP: "127.0.0.1", DecodeStatusPort: port, SessionID: session,
				RequiredDstInfoNum: t.req, KVIndices: []int64{room % 4096, room%4096 + 1}, AuxIndex: room % 1024}
			frames = q.AppendFrames(frames[:0], t.frags)
			if _, err := t.push.SendMessage(frames); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := <-received; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "rooms/s")
	for _, r := range p.Ranks() {
		if n := r.Counts().Errors; n > 0 {
			b.Fatalf("engine rank %d: %d errors: %v", r.EngineRank, n, r.Errors()[0])
		}
	}
}

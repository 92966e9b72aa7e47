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
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// zmtpPush is a raw ZMTP 3.0 PUSH peer written out by hand (greeting,
// NULL, READY), as a hostile tenant's would be: it connects from src and
// then writes frames that never end a message.
func zmtpPush(src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	greeting := make([]byte, 64)
	greeting[0], greeting[9], greeting[10] = 0xFF, 0x7F, 3
	copy(greeting[12:], "NULL")
	ready := []byte{5, 'R', 'E', 'A', 'D', 'Y', 11}
	ready = append(ready, "Socket-Type"...)
	ready = binary.BigEndian.AppendUint32(ready, 4)
	ready = append(ready, "PUSH"...)
	hello := append(greeting, 0x04, byte(len(ready)))
	if _, err := c.Write(append(hello, ready...)); err != nil {
		c.Close()
		return nil, err
	}
	if _, err := io.ReadFull(c, make([]byte, 64)); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// unfinished writes frames of size bytes with the MORE flag, count of
// them, and returns how many bytes went before the agent closed the
// connection.
func unfinished(c net.Conn, count, size int) int64 {
	var frame []byte
	if size > 255 {
		frame = binary.BigEndian.AppendUint64([]byte{0x03}, uint64(size))
	} else {
		frame = []byte{0x01, byte(size)}
	}
	frame = append(frame, make([]byte, size)...)
	batch := bytes.Repeat(frame, max(1, (1<<20)/len(frame)))
	var sent int64
	_ = c.SetWriteDeadline(time.Now().Add(20 * time.Second))
	for written := 0; written < count; written += len(batch) / len(frame) {
		n, err := c.Write(batch)
		sent += int64(n)
		if err != nil {
			break
		}
	}
	return sent
}

// Five raw ZMTP peers from an address no bootstrap server named send
// unfinished messages without end (three of 2,000,000 empty frames, two of
// 2,000 frames of 65,000 bytes, each reconnecting when dropped) at an
// agent given --memory-limit 512Mi: it drops each connection at the
// message's sixth frame or first 64 KiB, stays under its limit, and
// completes rooms throughout.
func TestAgentUnderUnfinishedMessagesStaysInItsLimit(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(t, l, nil)
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a, cmd := startAgentProcess(t, t.TempDir(), 0, 1, "--plan-dir", dir, "--memory-limit", "512Mi")
	if err := a.rank(0).RegisterEngine(t.Context(), receivertest.Engine(receivertest.Snapshot(t, l, 0), 0)); err != nil {
		t.Fatal(err)
	}
	statusAddr := a.log.find(t, "engine API listening")["statusAddr"].(string)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var conns, bytesSent atomic.Int64
	for i, shape := range []struct{ count, size int }{{2_000_000, 0}, {2_000_000, 0}, {2_000_000, 0}, {2_000, 65_000}, {2_000, 65_000}} {
		wg.Go(func() {
			src := fmt.Sprintf("127.0.0.%d", 10+i)
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := zmtpPush(src, statusAddr)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				conns.Add(1)
				bytesSent.Add(unfinished(c, shape.count, shape.size))
				c.Close()
			}
		})
	}
	start := time.Now()
	const rooms = 100
	for room := range int64(rooms) {
		if got := roomThroughAPI(t, a.rank(0), peer.BootstrapAddr(), 1<<40+room); got.Status != receiver.Success {
			t.Fatalf("room %d during the flood: %+v", room, got)
		}
	}
	perSecond := float64(rooms) / time.Since(start).Seconds()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()
	peak := peakRSS(t, cmd.Process.Pid)
	rejected := a.metric(t, receivertest.MetricStatusMessagesRejected+`{engine_rank="0",reason="FrameCount"}`)
	t.Logf("peak RSS %d MiB; %d hostile connections, %d MiB handed to the kernel before they were dropped, %s dropped at the sixth frame; %.0f rooms/s", peak>>20, conns.Load(), bytesSent.Load()>>20, rejected, perSecond)
	if peak >= 512<<20 {
		t.Fatalf("the agent's peak RSS was %d MiB, over its 512 MiB limit", peak>>20)
	}
	if conns.Load() < 10 || rejected == "" || rejected == "0" || strings.HasPrefix(rejected, "-") {
		t.Fatalf("the flood did not reach the agent: %d connections, %q dropped", conns.Load(), rejected)
	}
}

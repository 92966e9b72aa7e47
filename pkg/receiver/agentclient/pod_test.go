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

package agentclient_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// TestRanksOfOnePodEachUseTheirOwnSocket: the four decode ranks of the
// fragmented P8→D4 pair, each served on <dir>/rank-<R>.sock, each driven
// by its own goroutine in the reference order (one poll-first, one
// prefill-at-once room each). Every prefill rank must see requests only
// from the decode rank whose plan targets it.
func TestRanksOfOnePodEachUseTheirOwnSocket(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(t, l, func(c *prefillpeer.Config) { c.Default = prefillpeer.Success(9) })
	dir := t.TempDir()
	const ranks = 4
	engines := make([]receiver.EngineInfo, ranks)
	for rank := range ranks {
		snap := receivertest.Snapshot(t, l, rank)
		m, _ := receivertest.StartAgent(t, &snap, rank, nil)
		(&rig{socket: filepath.Join(dir, fmt.Sprintf("rank-%d.sock", rank)), accepted: new(atomic.Int64)}).serve(t, m)
		engines[rank] = receivertest.Engine(snap, rank)
	}
	var wg sync.WaitGroup
	errs := make([]error, ranks)
	for rank := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[rank] = driveRank(t, agentclient.SocketPath(dir, rank), peer.BootstrapAddr(), engines[rank], int64(rank*100))
		}()
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			t.Errorf("decode rank %d: %v", rank, err)
		}
	}
	for tp := range 8 {
		var rooms []int64
		for _, q := range peer.Rank(tp).Requests() {
			if want := engines[tp/2].SessionID; q.SessionID != want {
				t.Errorf("prefill rank %d got room %d from session %s, want decode rank %d's %s", tp, q.Room, q.SessionID, tp/2, want)
			}
			rooms = append(rooms, q.Room)
		}
		slices.Sort(rooms)
		if want := []int64{int64(tp / 2 * 100), int64(tp/2*100 + 1)}; !slices.Equal(rooms, want) {
			t.Errorf("prefill rank %d got rooms %v, want %v", tp, rooms, want)
		}
	}
}

// driveRank runs two rooms on one rank's socket: one polled until
// bootstrapped before its prefill, one prefilled at once.
func driveRank(t *testing.T, socket, addr string, info receiver.EngineInfo, first int64) error {
	c := agentclient.New(socket, agentclient.Options{})
	defer c.Close()
	mgr, err := agentclient.NewManager(t.Context(), c, info)
	if err != nil {
		return err
	}
	for room := first; room < first+2; room++ {
		rc := mgr.NewReceiver(t.Context(), addr, room)
		if room == first {
			if st, err := pollFor(t, rc, leftBootstrapping); err != nil || st != receiver.Bootstrapped {
				return errors.Join(err, rc.Failure(t.Context()))
			}
		}
		rc.Prefill(t.Context(), agentclient.Request{KVIndices: []int64{room, 1}, AuxIndex: 2})
		if st, err := pollFor(t, rc, finished); err != nil || st != receiver.Success {
			return errors.Join(err, rc.Failure(t.Context()))
		}
		if rc.BootstrapToken() != 9 {
			return fmt.Errorf("room %d: token %d, want 9", room, rc.BootstrapToken())
		}
		if err := rc.Clear(t.Context()); err != nil {
			return err
		}
	}
	return nil
}

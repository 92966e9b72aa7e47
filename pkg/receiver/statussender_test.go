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

package receiver_test

import (
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// Forged statuses from another host: 127.0.0.2 plays a pod that is not a
// prefill rank of the room (the peer's ranks register and send from
// 127.0.0.1). Correct frames naming exactly the ranks the room waits for —
// a Success from each, then a Failed — must neither complete nor fail the
// room nor choose its first token; each is counted as
// SenderAddressMismatch. The same frames from the ranks' own host then
// complete it.
func TestStatusFromAnotherHostIsRejected(t *testing.T) {
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0}, nil, nil)
	const room = 41
	s.Peer.Script(room, prefillpeer.Silence())
	s.OpenAndRequest(room)
	ep := receivertest.StatusEndpoint(t, s.Agents[0])
	send := func(from string, st kvwire.TransferPoll, rank int, token int64) {
		t.Helper()
		if err := prefillpeer.SendStatusFrom(from, ep, kvwire.Status{Room: room, State: st, PrefillTPRank: rank, BootstrapToken: token}); err != nil {
			t.Fatal(err)
		}
	}
	send("127.0.0.2", kvwire.Success, 0, 99) // decode rank 0's targets are prefill TP ranks 0 and 1
	send("127.0.0.2", kvwire.Success, 1, 99)
	send("127.0.0.2", kvwire.Failed, 0, 99)
	s.WaitCounter(0, 3, receivertest.MetricStatusMessagesRejected, "reason", receiver.RejectSenderAddress)
	if st, _ := s.Agents[0].Status(room); st.Status != receiver.Bootstrapped || st.BootstrapToken != -1 || st.Failure != nil {
		t.Fatalf("room %d after forged statuses from 127.0.0.2: %+v, want it untouched (Bootstrapped, no token, no failure)", room, st)
	}

	send("127.0.0.1", kvwire.Success, 0, 5)
	send("127.0.0.1", kvwire.Success, 1, 5) // the same token: two connections do not order their messages
	if st := s.WaitFinished(0, room); st.Status != receiver.Success || st.BootstrapToken != 5 {
		t.Fatalf("room %d after both ranks from their own host: %+v, want Success with token 5", room, st)
	}
	if got := s.Counter(0, receivertest.MetricStatusMessagesRejected, "reason", receiver.RejectSenderAddress); got != 3 {
		t.Fatalf("%v statuses rejected for their sender, want 3", got)
	}
}

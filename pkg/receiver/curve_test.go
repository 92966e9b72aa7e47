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
	"strings"
	"testing"
	"time"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/zmqsock"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

func keypair(t *testing.T) (public, secret string) {
	t.Helper()
	public, secret, err := zmq.NewCurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	return public, secret
}

// sendCurve sends one message to endpoint as a CURVE client of serverKey
// with its own key pair; it returns once the message left or was given up.
func sendCurve(t *testing.T, endpoint, serverKey, public, secret string, frames [][]byte) {
	t.Helper()
	sock, err := zmqsock.ConnectPush(nil, endpoint, zmqsock.Linger(time.Second), zmqsock.SendTimeout(time.Second),
		zmqsock.CurveClient(serverKey, public, secret))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sock.SendMessage(frames); err != nil && !zmqsock.WouldBlock(err) {
		t.Fatal(err)
	}
	sock.Close()
}

// With CURVE on (keys as a Secret would hold them), rooms run end to end
// over encrypted sockets; a plain ZMQ sender on the prefill's own host,
// which the address check alone would let through, cannot reach the status
// socket at all, and a CURVE sender with a key of its own is denied at
// connection and counted.
func TestCurveBetweenAgentAndPrefill(t *testing.T) {
	agentPublic, agentSecret := keypair(t)
	prefillPublic, prefillSecret := keypair(t)
	keys, err := receiver.NewCurveKeys(agentSecret, prefillPublic)
	if err != nil {
		t.Fatal(err)
	}
	if keys.AgentPublic != agentPublic {
		t.Fatalf("derived public key %s, want %s", keys.AgentPublic, agentPublic)
	}
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0},
		func(c *prefillpeer.Config) {
			c.Curve = &prefillpeer.CurveKeys{PrefillSecret: prefillSecret, PrefillPublic: prefillPublic, AgentPublic: agentPublic}
		},
		func(c *receiver.Config) { c.Curve = &keys })
	if st := s.WaitFinished(0, waitOpen(s, 60)); st.Status != receiver.Success {
		t.Fatalf("room 60 over CURVE: %+v", st)
	}

	const room = 61
	s.Peer.Script(room, prefillpeer.Silence())
	s.OpenAndRequest(room)
	ep := receivertest.StatusEndpoint(t, s.Agents[0])
	status := func(rank int, token int64) [][]byte {
		st := kvwire.Status{Room: room, State: kvwire.Success, PrefillTPRank: rank, BootstrapToken: token}
		return st.Frames()
	}
	forged := func(rank int) [][]byte { return status(rank, 99) }
	for rank := range 2 { // plain ZMQ from 127.0.0.1, the prefill ranks' own host
		if err := prefillpeer.SendFrames(ep, forged(rank)); err != nil {
			t.Fatal(err)
		}
	}
	strangerPublic, strangerSecret := keypair(t)
	for rank := range 2 { // CURVE with the agent's public key but a key pair of its own
		sendCurve(t, ep, agentPublic, strangerPublic, strangerSecret, forged(rank))
	}
	s.WaitCounter(0, 1, "pdtopo_receiver_status_connections_denied_total")
	if st, _ := s.Agents[0].Status(room); st.Status != receiver.Bootstrapped || st.BootstrapToken != -1 {
		t.Fatalf("room %d after forged statuses: %+v, want it untouched", room, st)
	}
	if got := s.Counter(0, receivertest.MetricStatusMessagesRejected, "reason", receiver.RejectSenderAddress) +
		s.Counter(0, receivertest.MetricStatusMessages); got != 2 { // room 60's two statuses
		t.Fatalf("%v status messages reached the agent, want only room 60's 2", got)
	}

	// the prefill's own key pair gets through
	for rank := range 2 {
		sendCurve(t, ep, agentPublic, prefillPublic, prefillSecret, status(rank, 7))
	}
	if st := s.WaitFinished(0, room); st.Status != receiver.Success || st.BootstrapToken != 7 {
		t.Fatalf("room %d with the prefill's key: %+v", room, st)
	}
}

// waitOpen opens and requests a room and returns its number.
func waitOpen(s *receivertest.Scenario, room int64) int64 {
	s.OpenAndRequest(room)
	return room
}

func TestNewCurveKeysRefusesBadKeys(t *testing.T) {
	_, secret := keypair(t)
	public, _ := keypair(t)
	for _, c := range []struct{ secret, public, want string }{
		{"short", public, "the agent's secret key is 5 characters; a CURVE key is 40 characters of Z85 text"},
		{secret, public + "x", "the prefill's public key is 41 characters"},
	} {
		if _, err := receiver.NewCurveKeys(c.secret, c.public); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewCurveKeys(%q, %q): %v, want %q", c.secret, c.public, err, c.want)
		}
	}
}

// A ZAP handler that stops while the agent runs is reported on
// AuthFailure, and from then on the status socket lets no new connection
// in, not even one with the prefill's key: CURVE fails closed.
func TestCurveFailsClosedWhenTheZAPHandlerStops(t *testing.T) {
	agentPublic, agentSecret := keypair(t)
	prefillPublic, prefillSecret := keypair(t)
	keys, err := receiver.NewCurveKeys(agentSecret, prefillPublic)
	if err != nil {
		t.Fatal(err)
	}
	s := receivertest.NewScenario(t, fixtures.FragmentedP8D4(), []int{0},
		func(c *prefillpeer.Config) {
			c.Curve = &prefillpeer.CurveKeys{PrefillSecret: prefillSecret, PrefillPublic: prefillPublic, AgentPublic: agentPublic}
		},
		func(c *receiver.Config) { c.Curve = &keys })
	m := s.Agents[0]
	select {
	case err := <-m.AuthFailure():
		t.Fatalf("AuthFailure before anything stopped: %v", err)
	default:
	}
	const room = 70
	s.Peer.Script(room, prefillpeer.Silence())
	s.OpenAndRequest(room)

	receiver.StopZAP(m)
	select {
	case err := <-m.AuthFailure():
		if !strings.Contains(err.Error(), "the CURVE authentication (ZAP) handler stopped") {
			t.Fatalf("AuthFailure: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a stopped ZAP handler was not reported within 5s")
	}
	ep := receivertest.StatusEndpoint(t, m)
	for rank := range 2 { // the prefill's own key, on new connections
		st := kvwire.Status{Room: room, State: kvwire.Success, PrefillTPRank: rank, BootstrapToken: 7}
		sendCurve(t, ep, agentPublic, prefillPublic, prefillSecret, st.Frames())
	}
	time.Sleep(500 * time.Millisecond)
	if st, _ := m.Status(room); st.Status != receiver.Bootstrapped {
		t.Fatalf("room %d after statuses on unauthenticated connections: %+v, want it untouched", room, st)
	}
}

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

package receiver

import (
	"fmt"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/zmqsock"
)

// CurveKeys turn on ZMQ CURVE between the agent and the prefill ranks
// (opt-in: the reference prefill speaks plain ZMQ). The status socket is a
// CURVE server that accepts only clients holding the prefill fleet's key
// pair, so nobody else can even connect to it; the agent's sockets to
// prefill ranks are CURVE clients of that key, so registrations and
// requests (where to write in GPU memory) are encrypted and reach only
// holders of the prefill's secret key. Keys are Z85 text (40 characters).
type CurveKeys struct {
	AgentSecret, AgentPublic string
	PrefillPublic            string
}

// curveDomain is the ZAP domain of the agent's status sockets.
const curveDomain = "pdtopo-status"

// NewCurveKeys checks the agent's secret key and the prefill's public key
// and derives the agent's public key.
func NewCurveKeys(agentSecret, prefillPublic string) (CurveKeys, error) {
	for name, k := range map[string]string{"the agent's secret key": agentSecret, "the prefill's public key": prefillPublic} {
		if len(k) != 40 || len(zmq.Z85decode(k)) != 32 {
			return CurveKeys{}, fmt.Errorf("%s is %d characters; a CURVE key is 40 characters of Z85 text (zmq_curve_keypair)", name, len(k))
		}
	}
	public, err := zmq.AuthCurvePublic(agentSecret)
	if err != nil {
		return CurveKeys{}, fmt.Errorf("deriving the agent's public key: %w", err)
	}
	return CurveKeys{AgentSecret: agentSecret, AgentPublic: public, PrefillPublic: prefillPublic}, nil
}

// startCurve starts the ZAP handler of the Manager's context, which lets
// only the prefill's key connect to the status socket, and returns the
// options of the status socket and of the sockets to prefill ranks.
func (m *Manager) startCurve(k *CurveKeys) (status, push []zmqsock.Option, err error) {
	m.zap, err = zmqsock.StartZAP(m.zctx, func(r zmqsock.ZAPRequest) (bool, string) {
		if r.Domain == curveDomain && r.CurveClientKey() == k.PrefillPublic {
			return true, "OK"
		}
		m.metrics.statusConnectionDenied()
		if m.rejectLog.allow("CurveDenied", m.now()) {
			m.log.Warn("status connection denied: not the prefill's CURVE key", "address", r.Address, "mechanism", r.Mechanism)
		}
		return false, "not the prefill's key"
	})
	if err != nil {
		return nil, nil, err
	}
	m.zapErr = make(chan error, 1)
	go m.watchZAP()
	return []zmqsock.Option{zmqsock.CurveServer(k.AgentSecret, curveDomain)},
		[]zmqsock.Option{zmqsock.CurveClient(k.PrefillPublic, k.AgentPublic, k.AgentSecret)}, nil
}

// watchZAP reports on AuthFailure a ZAP handler that stops while the
// Manager runs. The status socket then refuses every new connection
// (zmqsock.ZAPEnforceDomain) and no room can finish, so the agent is
// expected to exit and be restarted rather than limp on.
func (m *Manager) watchZAP() {
	select {
	case <-m.stop:
	case <-m.zap.Done():
		if m.closed.Load() {
			return
		}
		err := fmt.Errorf("engine rank %d: the CURVE authentication (ZAP) handler stopped: %w; the status socket refuses every new prefill connection", m.cfg.EngineRank, m.zap.Err())
		m.log.Error("CURVE authentication stopped", "error", err)
		m.zapErr <- err
	}
}

// AuthFailure receives an error if the CURVE authentication handler stops
// while the Manager runs (never when CURVE is off, or on Close).
func (m *Manager) AuthFailure() <-chan error { return m.zapErr }

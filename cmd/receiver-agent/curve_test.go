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
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	zmq "github.com/pebbe/zmq4"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// --curve-keys names a directory laid out as a mounted Secret: the agent
// speaks CURVE with a prefill holding the matching keys, end to end
// through the engine API; a directory without the keys is refused at start.
func TestAgentWithCurveKeys(t *testing.T) {
	agentPublic, agentSecret, err := zmq.NewCurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	prefillPublic, prefillSecret, err := zmq.NewCurveKeypair()
	if err != nil {
		t.Fatal(err)
	}
	secretDir := t.TempDir()
	for name, v := range map[string]string{"agent.key": agentSecret + "\n", "prefill.pub": prefillPublic + "\n"} {
		if err := os.WriteFile(filepath.Join(secretDir, name), []byte(v), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(t, l, func(c *prefillpeer.Config) {
		c.Curve = &prefillpeer.CurveKeys{PrefillSecret: prefillSecret, PrefillPublic: prefillPublic, AgentPublic: agentPublic}
	})
	dir := t.TempDir()
	objects, _ := receivertest.Publish(t, "pair", l)
	receivertest.ProjectPlans(t, dir, 1, objects)
	a := startAgent(t, 0, 2, "--plan-dir", dir, "--curve-keys", secretDir)
	register(t, a.rank(1), l, 1)
	if got := roomThroughAPI(t, a.rank(1), peer.BootstrapAddr(), 1); got.Status != receiver.Success {
		t.Fatalf("a room over CURVE: %+v", got)
	}

	err = run(t.Context(), []string{"--first-rank=0", "--socket-dir", t.TempDir(), "--plan-dir", dir, "--curve-keys", t.TempDir()}, io.Discard, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "--curve-keys: open ") || !strings.HasSuffix(err.Error(), "agent.key: no such file or directory") {
		t.Fatalf("an empty --curve-keys directory: %v", err)
	}
}

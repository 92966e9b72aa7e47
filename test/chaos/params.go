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

package chaos

import (
	"net"
	"os"
	"strconv"
	"testing"
	"time"
)

// The agent's timeouts in the suite: short, so that a stopped prefill is
// stopped past them within a bounded run.
const (
	bootstrapTimeout  = 4 * time.Second
	waitingTimeout    = 4 * time.Second
	httpTimeout       = time.Second
	heartbeatInterval = 2 * time.Second
	// hangAfter: a room open longer than the documented timeouts allow
	// (bootstrap, then waiting, plus the slowest bootstrap calls) hangs.
	hangAfter = bootstrapTimeout + waitingTimeout + 4*httpTimeout + 4*time.Second
	ranks     = 4
	// ratePerRank and inflightPerRank: 20 rooms/s, 32 in flight in all.
	ratePerRank     = 5
	inflightPerRank = 8
)

// durationEnv and seedEnv choose the run: `make test-chaos` sets a long one,
// `make test` runs the short default.
const (
	durationEnv = "PDTOPO_CHAOS_DURATION"
	seedEnv     = "PDTOPO_CHAOS_SEED"
)

func runParams(t *testing.T) (time.Duration, uint64) {
	d := 60 * time.Second
	if v := os.Getenv(durationEnv); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d < 40*time.Second {
			t.Fatalf("%s=%q: want a duration of at least 40s", durationEnv, v)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(seedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", seedEnv, v, err)
		}
	}
	return d, seed
}

// freePort is a loopback port nothing listens on now: the prefill's
// bootstrap port, kept over its restarts as a Service's would be.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

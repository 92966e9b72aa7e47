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
	"fmt"
	"math/rand/v2"
	"time"
)

// faultKind is one kind of fault the schedule injects.
type faultKind int

const (
	agentKill     faultKind = iota // SIGKILL the agent, restart it on the same sockets
	prefillStop                    // SIGSTOP the prefill past the timeouts: its bootstrap server hangs
	prefillMove                    // SIGKILL the prefill and restart it at once: its ranks come back on new ports
	bootstrapDown                  // SIGKILL the prefill and keep it down: its bootstrap server refuses
	engineRestart                  // SIGKILL one engine rank's driver and start another (it registers anew)
	faultKinds
)

func (k faultKind) String() string {
	return [...]string{"agent-kill", "prefill-stop", "prefill-move", "bootstrap-down", "engine-restart"}[k]
}

// fault is one entry of the schedule: at At after the start, hold it for Hold.
type fault struct {
	At   time.Duration
	Kind faultKind
	Hold time.Duration
	Rank int // engineRestart: which driver
}

func (f fault) String() string {
	return fmt.Sprintf("%v %v hold %v rank %d", f.At.Round(time.Millisecond), f.Kind, f.Hold.Round(time.Millisecond), f.Rank)
}

// schedule is the seeded list of faults over the first faultsFor of a run:
// every kind at least once (prefill-move among the first), then random
// kinds 1–3 s apart, each fault finished before the next starts. stopPast
// is how long a stopped prefill stays stopped: past the room timeouts.
func schedule(seed uint64, faultsFor, stopPast time.Duration) []fault {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	kinds := rng.Perm(int(faultKinds))
	var out []fault
	at := 2 * time.Second
	for i := 0; ; i++ {
		k := faultKind(rng.IntN(int(faultKinds)))
		if i < len(kinds) {
			k = faultKind(kinds[i])
		}
		f := fault{At: at, Kind: k, Rank: rng.IntN(4)}
		switch k {
		case prefillStop:
			f.Hold = stopPast + time.Duration(rng.IntN(2000))*time.Millisecond
		case bootstrapDown:
			f.Hold = 2*time.Second + time.Duration(rng.IntN(3000))*time.Millisecond
		case agentKill:
			f.Hold = time.Duration(200+rng.IntN(800)) * time.Millisecond
		}
		if f.At+f.Hold > faultsFor && i >= len(kinds) {
			return out
		}
		out = append(out, f)
		at += f.Hold + time.Duration(1000+rng.IntN(2000))*time.Millisecond
	}
}

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
	"syscall"
	"testing"
	"time"
)

// What conformance/tokenspeed/chaos needs to run this suite's schedule, with
// the same seeds, prefill, trap rooms and invariants, against tokenspeed's
// own decode receiver instead of the agent.

// Fault is one entry of a run's schedule; FaultKind its kind.
type (
	Fault     = fault
	FaultKind = faultKind
)

// The fault kinds.
const (
	AgentKill     = agentKill
	PrefillStop   = prefillStop
	PrefillMove   = prefillMove
	BootstrapDown = bootstrapDown
	EngineRestart = engineRestart
)

// The run's shape and the agent's timeouts, which the reference run gives
// the reference receiver where it has a setting for them.
const (
	Ranks             = ranks
	RatePerRank       = ratePerRank
	InflightPerRank   = inflightPerRank
	WaitingTimeout    = waitingTimeout
	HeartbeatInterval = heartbeatInterval
	HangAfter         = hangAfter
	CalmBefore        = calmBefore
	PrefillEnv        = prefillEnv
)

// Schedule is the whole fault plan of a run of duration with seed: the
// seeded faults, then a prefill restart on new ports at the start of the
// calm's lead-in, which the calm must recover from.
func Schedule(seed uint64, duration time.Duration) []Fault {
	faultsFor := duration - 2*calmBefore
	plan := schedule(seed, faultsFor, bootstrapTimeout+waitingTimeout+time.Second)
	// the last fault moves the prefill's ranks: the calm must find them again
	return append(plan, fault{At: faultsFor, Kind: prefillMove})
}

// RunParams is the run's duration and seed (PDTOPO_CHAOS_DURATION,
// PDTOPO_CHAOS_SEED).
func RunParams(t *testing.T) (time.Duration, uint64) { return runParams(t) }

// RoomBase is the first room of a decode rank's driver generation.
func RoomBase(rank, gen int) int64 { return roomBase(rank, gen) }

// RoomLine is what a driver prints when a room ends; DecodeRoom reads one.
type RoomLine = roomLine

// DecodeRoom reads a driver's line; false if it is not one.
func DecodeRoom(line string) (RoomLine, bool) { return decodeRoom(line) }

// Summary is what a run did.
type Summary = summary

// Check holds the rooms to the suite's invariants, reporting each broken
// one to r.
func Check(r Reporter, lines []RoomLine, lastFault time.Time, peakRSSKiB int64) Summary {
	return check(r, lines, lastFault, peakRSSKiB)
}

// FreePort, RepoRoot and RSSKiB: see freePort, repoRoot and rssKiB.
func FreePort(t *testing.T) int    { return freePort(t) }
func RepoRoot(t *testing.T) string { return repoRoot(t) }
func RSSKiB(pid int) int64         { return rssKiB(pid) }

// PrefillReady waits for the prefill process's "bootstrap ADDR" line.
func PrefillReady(t *testing.T, lines <-chan string) { prefillReady(t, lines) }

// Proc is one process of the system under test, restartable with the same
// command line; its stdout lines go to onLine (may be nil), its stderr to
// DIR/NAME.log.
type Proc struct{ p *proc }

// NewProc describes a process; Start runs it.
func NewProc(t *testing.T, dir, name string, env []string, onLine func(string), args ...string) *Proc {
	return &Proc{newProc(t, dir, name, env, onLine, args...)}
}

func (p *Proc) Start(t *testing.T)        { p.p.start(t) }
func (p *Proc) Signal(sig syscall.Signal) { p.p.signal(sig) }
func (p *Proc) Kill()                     { p.p.kill() }
func (p *Proc) Wait(d time.Duration) bool { return p.p.wait(d) }
func (p *Proc) Pid() int                  { return p.p.pid() }

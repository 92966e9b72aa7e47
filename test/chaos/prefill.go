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
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

// prefillEnv makes the test binary play the prefill (PrefillMain) instead of
// running the tests: the suite SIGSTOPs and SIGKILLs it as a process.
const prefillEnv = "PDTOPO_CHAOS_PREFILL"

// Trap rooms: the room numbers a driver generation uses start at
// roomBase(rank, gen); of them, every seq%trapEvery == trapAt is answered
// by one of the decode rank's two prefill ranks only (the other stays
// silent), so the agent must never report it Success.
const (
	trapEvery   = 16
	trapAt      = 5
	generations = 64   // driver generations scripted per decode rank
	scriptedSeq = 8192 // rooms scripted per generation
)

// roomBase is the first room of a decode rank's driver generation.
func roomBase(rank, gen int) int64 { return int64(rank+1)<<40 | int64(gen)<<24 }

// isTrap says whether room is a trap room.
func isTrap(room int64) bool { return (room&(1<<24-1))%trapEvery == trapAt }

// trapSilentRank is the prefill rank that stays silent in decode rank d's
// trap rooms: in the GQA p8→d4 sample, decode rank d reads prefill ranks
// 2d and 2d+1.
func trapSilentRank(d int) int { return 2*d + 1 }

// PrefillMain runs the prefill of the sample PDPair when the test binary
// was started with prefillEnv=PORT (and PDTOPO_CHAOS_PAIR=FILE); it reports
// whether it ran.
func PrefillMain() bool {
	port := os.Getenv(prefillEnv)
	if port == "" {
		return false
	}
	if err := servePrefill(port, os.Getenv("PDTOPO_CHAOS_PAIR")); err != nil {
		fmt.Fprintln(os.Stderr, "chaos prefill:", err)
		os.Exit(1)
	}
	return true
}

func servePrefill(port, pairFile string) error {
	n, err := strconv.Atoi(port)
	if err != nil {
		return err
	}
	pair, err := manifest.ReadPDPairFile(pairFile, "")
	if err != nil {
		return err
	}
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		return err
	}
	cfg := prefillpeer.ConfigFor(l)
	cfg.Host, cfg.BootstrapPort, cfg.KeepRequests = "127.0.0.1", n, -1
	cfg.Default = prefillpeer.Success(7)
	// the ranks register once the trap rooms are scripted: no room reaches
	// a rank that would answer it by default
	cfg.DeferRegistration = true
	p, err := prefillpeer.Start(cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	for d := range 4 {
		for gen := range generations {
			for seq := int64(trapAt); seq < scriptedSeq; seq += trapEvery {
				p.ScriptRank(roomBase(d, gen)+seq, trapSilentRank(d), prefillpeer.Silence())
			}
		}
	}
	if err := p.RegisterRanks(); err != nil {
		return err
	}
	fmt.Println("bootstrap", p.BootstrapAddr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	return nil
}

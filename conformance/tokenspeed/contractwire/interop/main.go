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

// Command interop plays every decode rank of a pair against a prefill fleet
// made of tokenspeed's own code (../fleet.py), speaking the cache-contract
// wire with pkg/kvwire only: it reads the bootstrap answer, registers with 8
// frames, checks manifests against the decode contract and sends them in
// 3-frame pre-allocations, and reads the status frames. It fails when the
// engine and pkg/kvwire disagree: on the answer, on a room's outcome, on a
// manifest or registration one refuses and the other takes.
// conformance/tokenspeed/contractwire/interop.sh runs it; conformance/README.md
// says how.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
)

// pairVectors is the part of a pair's vectors file (pkg/kvwire/testdata/
// contract) the driver uses: the decode side's contract and, per decode
// rank, the targets and dummies tokenspeed's receiver plans.
type pairVectors struct {
	Pair    string
	Prefill struct {
		TPSize   int    `json:"tp_size"`
		DPSize   int    `json:"dp_size"`
		Contract string `json:"contract"`
	}
	Decode struct {
		TPSize   int    `json:"tp_size"`
		Contract string `json:"contract"`
	}
	Ranks []struct {
		Targets []int `json:"targets"`
		Dummies []int `json:"dummies"`
	}
	Manifests []struct {
		Wire string `json:"wire"`
	}
	ManifestRefusals []struct {
		Name    string
		Wire    string
		Verdict struct {
			Accepted  bool
			Exception string
		}
	} `json:"manifest_refusals"`
}

func main() {
	vectors := flag.String("vectors", "", "the pair's vectors file (pkg/kvwire/testdata/contract/PAIR.json)")
	bootstrap := flag.String("bootstrap", "", "the fleet's bootstrap address, host:port")
	timeout := flag.Duration("timeout", 20*time.Second, "how long a room may take")
	flag.Parse()
	v, err := load(*vectors)
	if err == nil {
		var d *driver
		if d, err = newDriver(v, *bootstrap, *timeout); err == nil {
			err = d.run()
			d.close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		os.Exit(1)
	}
}

func load(path string) (*pairVectors, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v pairVectors
	return &v, json.Unmarshal(b, &v)
}

func (d *driver) run() error {
	if err := d.checkBootstrapAnswer(); err != nil {
		return err
	}
	for _, r := range d.ranks {
		if err := d.register(r); err != nil {
			return err
		}
	}
	room := int64(1 << 40)
	for i, m := range d.v.Manifests {
		for g := range d.v.Prefill.DPSize {
			room++
			if err := d.completeRoom(room, []byte(m.Wire)); err != nil {
				return fmt.Errorf("manifest %d, DP group %d: %w", i, g, err)
			}
		}
	}
	refused := 0
	for _, r := range d.v.ManifestRefusals {
		room++
		n, err := d.refusedRoom(room, []byte(r.Wire), r.Verdict.Accepted, r.Verdict.Exception)
		if err != nil {
			return fmt.Errorf("manifest %q: %w", r.Name, err)
		}
		refused += n
	}
	room++
	if err := d.rejectedRegistrations(room); err != nil {
		return err
	}
	fmt.Printf("interop %s: bootstrap answer, %d registrations, %d rooms completed, %d refused manifests agreed (%d sent to the engine and failed by it), rejected registrations agreed\n",
		d.v.Pair, d.registrations, d.completed, len(d.v.ManifestRefusals), refused)
	return nil
}

// checkBootstrapAnswer: the engine's server answers on the contract wire,
// with the prefill contract the vectors were made with.
func (d *driver) checkBootstrapAnswer() error {
	body, err := d.get(kvwire.RoutePath + "?" + kvwire.ParallelInfoQuery)
	if err != nil {
		return err
	}
	wire, err := kvwire.AnswerWire(body)
	if err != nil {
		return fmt.Errorf("bootstrap answer: %w", err)
	}
	if wire != kvwire.WireCacheContract {
		return fmt.Errorf("bootstrap answer: wire %s", wire)
	}
	c, err := kvcontract.DecodeParallelInfo(body)
	switch {
	case err != nil:
		return fmt.Errorf("bootstrap answer: %w", err)
	case c.TPPerDPGroup() != d.v.Prefill.TPSize || c.PrefillDPSize != d.v.Prefill.DPSize:
		return fmt.Errorf("bootstrap answer: TP %d in %d DP groups, the pair has %d in %d", c.TPPerDPGroup(), c.PrefillDPSize, d.v.Prefill.TPSize, d.v.Prefill.DPSize)
	case string(c.CacheLayout) != d.v.Prefill.Contract:
		return fmt.Errorf("bootstrap answer: the fleet's contract is not the pair's")
	case string(c.MarshalPython()) != string(body):
		return fmt.Errorf("bootstrap answer: re-encodes differently:\n%.300s\n%.300s", c.MarshalPython(), body)
	}
	return nil
}

// completeRoom sends a valid manifest from every decode rank and expects
// Success from exactly each rank's targets, with the fleet's token.
func (d *driver) completeRoom(room int64, manifest []byte) error {
	for _, r := range d.ranks {
		if _, err := kvcontract.ValidateManifest(manifest, &d.layout); err != nil {
			return fmt.Errorf("a manifest tokenspeed built fails ValidateManifest: %w", err)
		}
		if err := d.preAllocate(r, room, manifest); err != nil {
			return err
		}
	}
	for _, r := range d.ranks {
		got, err := d.collect(r, room, len(r.targets))
		if err != nil {
			return err
		}
		for _, s := range got {
			if s.State != kvwire.Success || !r.targets[s.PrefillTPRank] || s.BootstrapToken != 1000+room%1000 {
				return fmt.Errorf("decode rank %d room %d: status %+v; want Success from targets %v with token %d", r.rank, room, s, keys(r.targets), 1000+room%1000)
			}
		}
		if len(distinctRanks(got)) != len(r.targets) {
			return fmt.Errorf("decode rank %d room %d: Success from %v, want %v", r.rank, room, distinctRanks(got), keys(r.targets))
		}
	}
	d.completed++
	return nil
}

// refusedRoom: ValidateManifest refuses what the engine refuses. A manifest
// the engine refuses with its own error (not a crash) is then sent anyway,
// from decode rank 0, and each of its targets must fail the room.
func (d *driver) refusedRoom(room int64, manifest []byte, engineAccepts bool, exception string) (int, error) {
	_, err := kvcontract.ValidateManifest(manifest, &d.layout)
	switch {
	case engineAccepts && err == nil:
		return 0, d.completeRoom(room, manifest)
	case engineAccepts && kvwire.ReasonOf(err) == kvwire.ReasonUnknownField:
		return 0, nil // stricter than the engine on purpose (docs/wire.md)
	case engineAccepts:
		return 0, fmt.Errorf("the engine accepts it, ValidateManifest refuses: %w", err)
	case err == nil:
		return 0, fmt.Errorf("the engine refuses it, ValidateManifest accepts it")
	case exception != "CacheContractError":
		return 0, nil // the engine's handler crashes on it and never answers: not sent
	}
	r := d.ranks[0]
	if err := d.preAllocate(r, room, manifest); err != nil {
		return 0, err
	}
	got, err := d.collect(r, room, len(r.targets))
	if err != nil {
		return 0, err
	}
	for _, s := range got {
		if s.State != kvwire.Failed {
			return 0, fmt.Errorf("room %d: %v from prefill rank %d; the engine should fail it", room, s.State, s.PrefillTPRank)
		}
	}
	return 1, nil
}

// rejectedRegistrations registers two sessions the engine must reject (an
// arena pointer of 0, which pkg/kvwire refuses to encode and is written by
// hand here; a decode rank the prefill rank does not serve) and expects
// their pre-allocations to fail.
func (d *driver) rejectedRegistrations(room int64) error {
	bad := d.newSession(d.v.Decode.TPSize - 1)
	defer bad.pull.Close()
	reg := d.registration(bad)
	reg.ArenaPtr = 0
	if err := reg.Validate(); kvwire.ReasonOf(err) != kvwire.ReasonInvalidValue {
		return fmt.Errorf("kvwire's Validate takes an arena pointer of 0: %v", err)
	}
	frames := reg.Frames()
	target := firstKey(d.ranks[len(d.ranks)-1].targets)
	if err := d.send(target, d.group(room), frames); err != nil {
		return err
	}
	if err := d.expectFailed(bad, target, room); err != nil {
		return fmt.Errorf("arena pointer 0: %w", err)
	}
	for p := range d.v.Prefill.TPSize {
		if d.ranks[0].targets[p] || d.ranks[0].dummies[p] {
			continue
		}
		wrong := d.newSession(0)
		defer wrong.pull.Close()
		r := d.registration(wrong)
		if err := d.send(p, d.group(room+1), r.Frames()); err != nil {
			return err
		}
		if err := d.expectFailed(wrong, p, room+1); err != nil {
			return fmt.Errorf("decode rank 0 registered at prefill rank %d: %w", p, err)
		}
		break
	}
	return nil
}

func (d *driver) expectFailed(s *session, target int, room int64) error {
	time.Sleep(200 * time.Millisecond) // the registration is read before the request
	p := kvcontract.PreAllocation{Room: room, SessionID: s.id, Manifest: []byte(d.v.Manifests[0].Wire)}
	if err := d.send(target, d.group(room), p.Frames()); err != nil {
		return err
	}
	got, err := d.collect(s, room, 1)
	if err != nil {
		return err
	}
	if got[0].State != kvwire.Failed || got[0].PrefillTPRank != target {
		return fmt.Errorf("status %+v; want Failed from prefill rank %d", got[0], target)
	}
	return nil
}

func keys(m map[int]bool) []int {
	var out []int
	for k := range m {
		out = append(out, k)
	}
	return out
}

func firstKey(m map[int]bool) int {
	best := -1
	for k := range m {
		if best < 0 || k < best {
			best = k
		}
	}
	return best
}

func distinctRanks(ss []kvwire.Status) map[int]bool {
	out := map[int]bool{}
	for _, s := range ss {
		out[s.PrefillTPRank] = true
	}
	return out
}

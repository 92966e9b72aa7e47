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

package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// The vectors under pkg/kvwire/testdata/contract were written once by
// tokenspeed's own code at tokenspeed.CacheContractCommit
// (conformance/tokenspeed; the README of testdata/contract says how): what
// its bootstrap server answers, what its decode receiver
// sends, and what its prefill makes of frames and manifests. These tests
// hold pkg/kvwire to them byte for byte and verdict for verdict.

type contractPairVectors struct {
	Pair    string
	Prefill struct {
		TPSize   int    `json:"tp_size"`
		DPSize   int    `json:"dp_size"`
		Contract string `json:"contract"`
	}
	Decode struct {
		TPSize     int    `json:"tp_size"`
		ArenaPtr   uint64 `json:"arena_ptr"`
		StatusPort int    `json:"status_port"`
		Contract   string `json:"contract"`
	}
	Bootstrap struct {
		RankRegistrations []string `json:"rank_registrations"`
		ParallelInfo      string   `json:"parallel_info"`
		RankAddress       string   `json:"rank_address"`
	}
	Ranks []struct {
		DecodeTPRank int      `json:"decode_tp_rank"`
		SessionID    string   `json:"session_id"`
		Targets      []int    `json:"targets"`
		Dummies      []int    `json:"dummies"`
		Registration [][]byte `json:"registration"`
	}
	Room      int64
	Manifests []struct {
		PrefixLen      int64  `json:"prefix_len"`
		PromptLen      int64  `json:"prompt_len"`
		Wire           string `json:"wire"`
		PreAllocations []struct {
			DecodeTPRank  int      `json:"decode_tp_rank"`
			PrefillTPRank int      `json:"prefill_tp_rank"`
			IsDummy       bool     `json:"is_dummy"`
			Frames        [][]byte `json:"frames"`
		} `json:"pre_allocations"`
	}
	ManifestRefusals []struct {
		Name    string
		Wire    string
		Verdict engineVerdict
	} `json:"manifest_refusals"`
}

type engineVerdict struct {
	Accepted  bool
	Stage     string
	Exception string
	Error     string
}

func loadContractPairs(t testing.TB) []contractPairVectors {
	t.Helper()
	files, err := filepath.Glob("../testdata/contract/*-*.json")
	if err != nil || len(files) < 8 {
		t.Fatalf("contract vectors: %v, %d files", err, len(files))
	}
	var out []contractPairVectors
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v contractPairVectors
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, v)
	}
	return out
}

func TestContractVectorsBootstrap(t *testing.T) {
	for _, v := range loadContractPairs(t) {
		t.Run(v.Pair, func(t *testing.T) {
			if w, err := kvwire.AnswerWire([]byte(v.Bootstrap.ParallelInfo)); err != nil || w != kvwire.WireCacheContract {
				t.Fatalf("AnswerWire: %v, wire %q", err, w)
			}
			c, err := DecodeParallelInfo([]byte(v.Bootstrap.ParallelInfo))
			if err != nil {
				t.Fatalf("DecodeParallelInfo: %v", err)
			}
			if c.PrefillTPSize != v.Prefill.TPSize*v.Prefill.DPSize || c.PrefillDPSize != v.Prefill.DPSize || c.TPPerDPGroup() != v.Prefill.TPSize {
				t.Errorf("sizes %d/%d, want world %d in %d DP groups", c.PrefillTPSize, c.PrefillDPSize, v.Prefill.TPSize*v.Prefill.DPSize, v.Prefill.DPSize)
			}
			if string(c.CacheLayout) != v.Prefill.Contract {
				t.Errorf("cache_layout differs from the prefill ranks' contract")
			}
			if got := c.MarshalPython(); string(got) != v.Bootstrap.ParallelInfo {
				t.Errorf("MarshalPython:\n%.200s\nthe engine's server:\n%.200s", got, v.Bootstrap.ParallelInfo)
			}
			for i, body := range v.Bootstrap.RankRegistrations {
				g, err := DecodeRankRegistration([]byte(body))
				if err != nil {
					t.Fatalf("rank registration %d: %v", i, err)
				}
				if g.EngineRank != i || string(g.CacheLayout) != v.Prefill.Contract || g.Role != kvwire.RolePrefill {
					t.Errorf("rank registration %d: engine rank %d, role %q", i, g.EngineRank, g.Role)
				}
				if got := g.MarshalPython(); string(got) != body {
					t.Errorf("rank registration %d re-encodes as\n%.200s\nnot\n%.200s", i, got, body)
				}
			}
			if _, err := kvwire.DecodeRankAddress([]byte(v.Bootstrap.RankAddress)); err != nil {
				t.Errorf("rank address: %v", err)
			}
		})
	}
}

func TestContractVectorsRegistration(t *testing.T) {
	for _, v := range loadContractPairs(t) {
		for _, r := range v.Ranks {
			g, err := DecodeRegistration(r.Registration)
			if err != nil {
				t.Fatalf("%s decode rank %d: %v", v.Pair, r.DecodeTPRank, err)
			}
			want := Registration{DecodeIP: "127.0.0.1", DecodeStatusPort: v.Decode.StatusPort, SessionID: r.SessionID,
				ArenaPtr: v.Decode.ArenaPtr, Contract: []byte(v.Decode.Contract), DecodeTPSize: v.Decode.TPSize, DecodeTPRank: r.DecodeTPRank}
			if !sameContractRegistration(g, want) {
				t.Errorf("%s decode rank %d: decoded %+v", v.Pair, r.DecodeTPRank, g)
			}
			if err := want.Validate(); err != nil {
				t.Errorf("%s decode rank %d: Validate: %v", v.Pair, r.DecodeTPRank, err)
			}
			if got := want.Frames(); !equalFrames(got, r.Registration) {
				t.Errorf("%s decode rank %d: Frames differ from the engine's receiver", v.Pair, r.DecodeTPRank)
			}
		}
	}
}

func sameContractRegistration(a, b Registration) bool {
	return bytes.Equal(a.Contract, b.Contract) && a.DecodeIP == b.DecodeIP && a.DecodeStatusPort == b.DecodeStatusPort &&
		a.SessionID == b.SessionID && a.ArenaPtr == b.ArenaPtr && a.DecodeTPSize == b.DecodeTPSize && a.DecodeTPRank == b.DecodeTPRank
}

func TestContractVectorsManifests(t *testing.T) {
	for _, v := range loadContractPairs(t) {
		layout, err := ManifestLayoutFromContract([]byte(v.Decode.Contract))
		if err != nil {
			t.Fatalf("%s: %v", v.Pair, err)
		}
		for _, m := range v.Manifests {
			name := v.Pair + " " + m.Wire[:min(len(m.Wire), 60)]
			parsed, err := DecodeManifest([]byte(m.Wire))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got := parsed.AppendWire(nil); string(got) != m.Wire {
				t.Errorf("%s: re-encodes as %s", name, got)
			}
			sum, err := ValidateManifest([]byte(m.Wire), &layout)
			if err != nil || sum.PrefixLen != m.PrefixLen || sum.PromptLen != m.PromptLen || sum.Groups != len(layout.Groups) {
				t.Errorf("%s: ValidateManifest %+v, %v", name, sum, err)
			}
			if err := layout.Check(&parsed); err != nil {
				t.Errorf("%s: Check: %v", name, err)
			}
			checkPreAllocations(t, v, m.Wire, m.PreAllocations)
		}
	}
}

func checkPreAllocations(t *testing.T, v contractPairVectors, wire string, pres []struct {
	DecodeTPRank  int      `json:"decode_tp_rank"`
	PrefillTPRank int      `json:"prefill_tp_rank"`
	IsDummy       bool     `json:"is_dummy"`
	Frames        [][]byte `json:"frames"`
}) {
	t.Helper()
	if len(pres) == 0 {
		t.Fatalf("%s: no pre-allocations", v.Pair)
	}
	for _, p := range pres {
		got, err := DecodePreAllocation(p.Frames)
		if err != nil {
			t.Fatalf("%s %d→%d: %v", v.Pair, p.DecodeTPRank, p.PrefillTPRank, err)
		}
		if got.Room != v.Room || got.Dummy() != p.IsDummy || got.SessionID != v.Ranks[p.DecodeTPRank].SessionID {
			t.Errorf("%s %d→%d: decoded room %d session %q dummy %v", v.Pair, p.DecodeTPRank, p.PrefillTPRank, got.Room, got.SessionID, got.Dummy())
		}
		if !p.IsDummy && string(got.Manifest) != wire {
			t.Errorf("%s %d→%d: the manifest frame is not the manifest", v.Pair, p.DecodeTPRank, p.PrefillTPRank)
		}
		mine := PreAllocation{Room: v.Room, SessionID: v.Ranks[p.DecodeTPRank].SessionID}
		if !p.IsDummy {
			mine.Manifest = []byte(wire)
		}
		if !equalFrames(mine.Frames(), p.Frames) {
			t.Errorf("%s %d→%d: Frames differ from the engine's receiver", v.Pair, p.DecodeTPRank, p.PrefillTPRank)
		}
	}
}

// engineReasons maps the engine's refusal messages to the reason pkg/kvwire
// gives; a KeyError is the engine crashing on a missing key.
var engineReasons = []struct {
	message string
	reason  kvwire.Reason
}{
	{"requires prefix_len < prompt_len", kvwire.ReasonManifestPrefixNotBeforePrompt},
	{"group order disagrees with layout", kvwire.ReasonManifestGroupOrder},
	{"not aligned to prefix_granularity", kvwire.ReasonManifestPrefixUnaligned},
	{"block count disagrees with its transfer policy", kvwire.ReasonManifestBlockCount},
	{"has an out-of-bounds block", kvwire.ReasonManifestBlockOutsideArena},
	{"invalid Cache block manifest JSON", kvwire.ReasonMalformedJSON},
	{"payload must be a JSON object", kvwire.ReasonMalformedJSON},
	{"payload must be 1..", kvwire.ReasonPayloadSize},
}

// stricterThanTheEngine are the vectors the engine accepts and pkg/kvwire
// refuses, on purpose (doc.go).
var stricterThanTheEngine = map[string]kvwire.Reason{"unknown key": kvwire.ReasonUnknownField}

func engineReason(t *testing.T, v engineVerdict) kvwire.Reason {
	t.Helper()
	if v.Exception == "KeyError" {
		return kvwire.ReasonMissingField
	}
	for _, e := range engineReasons {
		if strings.Contains(v.Error, e.message) {
			return e.reason
		}
	}
	t.Fatalf("no reason for the engine's %s %q", v.Exception, v.Error)
	return ""
}

func TestContractVectorsManifestRefusals(t *testing.T) {
	n := 0
	for _, v := range loadContractPairs(t) {
		layout, err := ManifestLayoutFromContract([]byte(v.Decode.Contract))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range v.ManifestRefusals {
			_, err := ValidateManifest([]byte(r.Wire), &layout)
			if want, ok := stricterThanTheEngine[r.Name]; ok {
				if !r.Verdict.Accepted || kvwire.ReasonOf(err) != want {
					t.Errorf("%s %q: engine accepts: %v; ValidateManifest: %v, want reason %s", v.Pair, r.Name, r.Verdict.Accepted, err, want)
				}
				continue
			}
			if r.Verdict.Accepted {
				if err != nil {
					t.Errorf("%s %q: the engine accepts it; ValidateManifest: %v", v.Pair, r.Name, err)
				}
				continue
			}
			n++
			if want := engineReason(t, r.Verdict); kvwire.ReasonOf(err) != want {
				t.Errorf("%s %q: the engine refuses it (%s); ValidateManifest: %v, want reason %s", v.Pair, r.Name, r.Verdict.Error, err, want)
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d refused manifests in the vectors", n)
	}
}

type frameVectors struct {
	Refusals []struct {
		Kind     string
		Name     string
		Frames   [][]byte
		PadFrame int `json:"pad_frame"`
		PadTo    int `json:"pad_to"`
		Verdict  struct {
			Accepted bool
			Error    string
		}
	}
	Status [][][]byte
}

// sent rebuilds the frames the engine judged: the padded frame, when there
// is one, with spaces before its closing brace.
func sentFrames(frames [][]byte, padFrame, padTo int) [][]byte {
	if padTo == 0 {
		return frames
	}
	out := append([][]byte(nil), frames...)
	f := out[padFrame]
	padded := append(append(append([]byte(nil), f[:len(f)-1]...), bytes.Repeat([]byte(" "), padTo-len(f))...), '}')
	out[padFrame] = padded
	return out
}

// The engine's own parsers and pkg/kvwire's decoders agree on every frame
// set one edit away from what the engine sends.
func TestContractVectorsFrameVerdicts(t *testing.T) {
	b, err := os.ReadFile("../testdata/contract/frames.json")
	if err != nil {
		t.Fatal(err)
	}
	var v frameVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range v.Refusals {
		frames := sentFrames(r.Frames, r.PadFrame, r.PadTo)
		var err error
		switch r.Kind {
		case "registration":
			_, err = DecodeRegistration(frames)
		case "pre_allocation":
			_, err = DecodePreAllocation(frames)
		default:
			t.Fatalf("kind %q", r.Kind)
		}
		kinds[r.Kind]++
		if (err == nil) != r.Verdict.Accepted {
			t.Errorf("%s %q: engine accepts: %v (%s); pkg/kvwire: %v", r.Kind, r.Name, r.Verdict.Accepted, r.Verdict.Error, err)
		}
		if err != nil {
			wantTypedError(t, err)
		}
	}
	if kinds["registration"] < 20 || kinds["pre_allocation"] < 10 {
		t.Fatalf("too few frame vectors: %v", kinds)
	}
	if len(v.Status) != 2 {
		t.Fatalf("%d status vectors", len(v.Status))
	}
	for i, frames := range v.Status {
		s, err := kvwire.DecodeStatus(frames)
		if err != nil {
			t.Fatalf("status %d: %v", i, err)
		}
		if !equalFrames(s.Frames(), frames) {
			t.Errorf("status %d re-encodes differently", i)
		}
	}
}

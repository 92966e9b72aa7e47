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
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// decodeCase is a byte string and whether the engine's from_wire_bytes
// accepted it (and the SHA-256 of its re-encoding when it did).
type decodeCase struct {
	Name            string `json:"name"`
	Text            string `json:"text"`
	Base64          string `json:"base64"`
	TrailingSpaces  int    `json:"trailingSpaces"`
	Accepted        bool   `json:"accepted"`
	Error           string `json:"error"`
	CanonicalSHA256 string `json:"canonicalSHA256"`
	CanonicalError  string `json:"canonicalError"`
}

func (c decodeCase) bytes(t testing.TB) []byte {
	raw := []byte(c.Text)
	if c.Base64 != "" {
		var err error
		if raw, err = base64.StdEncoding.DecodeString(c.Base64); err != nil {
			t.Fatal(err)
		}
	}
	return append(raw, bytes.Repeat([]byte(" "), c.TrailingSpaces)...)
}

func TestParseContractRefusesExactlyWhatTheEngineRefuses(t *testing.T) {
	var cases []decodeCase
	readGzipJSON(t, "../testdata/contract/decode-cases.json.gz", &cases)
	if len(cases) < 500 {
		t.Fatalf("only %d decode cases", len(cases))
	}
	accepted := 0
	for _, c := range cases {
		got, err := Parse(c.bytes(t))
		switch {
		case c.Accepted && err != nil:
			t.Errorf("%s: the engine accepts it, pdtopo refuses: %v", c.Name, err)
		case !c.Accepted && err == nil:
			t.Errorf("%s: the engine refuses it (%s), pdtopo accepts it", c.Name, c.Error)
		case err != nil:
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || (le.Reason != transferplan.ReasonContractInvalid && le.Reason != transferplan.ReasonContractTooLarge) {
				t.Errorf("%s: refused with %v, want a *LayoutError with a contract decoding reason", c.Name, err)
			} else {
				checkEndsWithFix(t, le)
			}
		case c.CanonicalSHA256 != "" && got.SHA256() != c.CanonicalSHA256:
			t.Errorf("%s: re-encoded as %s, which is not the engine's to_wire_bytes()", c.Name, got.Canonical())
		default:
			accepted++
		}
	}
	if accepted < 100 {
		t.Errorf("only %d cases accepted and re-encoded as the engine does", accepted)
	}
}

func FuzzParseContract(f *testing.F) {
	var cases []decodeCase
	readGzipJSON(f, "../testdata/contract/decode-cases.json.gz", &cases)
	for i, c := range cases {
		if c.TrailingSpaces == 0 && i%4 == 0 {
			f.Add(c.bytes(f))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := Parse(raw)
		if err != nil {
			var le *transferplan.LayoutError
			if !errors.As(err, &le) || !strings.HasPrefix(string(le.Reason), "Contract") {
				t.Fatalf("refused without a contract reason: %v", err)
			}
			return
		}
		// The engine re-reads its own re-encoding to the same contract.
		again, err := Parse(c.Canonical())
		if err != nil && len(c.Canonical()) <= MaxBytes {
			t.Fatalf("the canonical form %q does not decode: %v", c.Canonical(), err)
		}
		if err == nil && !bytes.Equal(again.Canonical(), c.Canonical()) {
			t.Fatalf("re-encoding is not stable:\n%s\n%s", c.Canonical(), again.Canonical())
		}
		// A contract that decodes is planned against itself without a panic.
		_, _ = Plan(Pair{Prefill: transferplan.Parallelism{TPSize: 2, DPSize: 1}, Decode: transferplan.Parallelism{TPSize: 3, DPSize: 1}, PrefillContract: c, DecodeContract: c})
	})
}

// randomPairsFile holds the engine's verdicts on random pairs; a larger
// file made as testdata/contract/README.md says can be given with
// PDTOPO_CONTRACT_RANDOM_PAIRS.
func TestContractPlannerAgreesWithEngineOnRandomPairs(t *testing.T) {
	path := "../testdata/contract/random-pairs.json.gz"
	if p := os.Getenv("PDTOPO_CONTRACT_RANDOM_PAIRS"); p != "" {
		path = p
	}
	var pairs []pairVector
	readGzipJSON(t, path, &pairs)
	accepted := 0
	for _, v := range pairs {
		if v.Engine.Accepted {
			accepted++
		}
		t.Run(v.Name, func(t *testing.T) { checkRandomPair(t, v) })
	}
	t.Logf("%d random pairs, %d planned by the engine", len(pairs), accepted)
	if accepted < len(pairs)/10 || accepted == len(pairs) {
		t.Errorf("%d of %d pairs planned: the set should mix plans and refusals", accepted, len(pairs))
	}
}

// checkRandomPair is checkPairVector without frames, and with the engine's
// crashes (an IndexError where a duplicated field id has another shape)
// taken as refusals pdtopo reports as unsupported values.
func checkRandomPair(t *testing.T, v pairVector) {
	t.Helper()
	if !v.Engine.Accepted && v.Engine.Error != "CacheContractError" && v.Engine.Error != "UnsupportedPDLayoutError" {
		pre, _ := Parse([]byte(v.PrefillContract))
		dec, _ := Parse([]byte(v.DecodeContract))
		_, err := Plan(Pair{Prefill: v.Prefill, Decode: v.Decode, PrefillContract: pre, DecodeContract: dec})
		var le *transferplan.LayoutError
		if !errors.As(err, &le) || le.Reason != transferplan.ReasonContractUnsupportedValue {
			t.Errorf("the engine fails with %s (%s); pdtopo gives %v, want %s", v.Engine.Error, v.Engine.Message, err, transferplan.ReasonContractUnsupportedValue)
		} else {
			checkEndsWithFix(t, le)
		}
		return
	}
	v.Frames = nil
	checkPairVectorPlans(t, v)
}

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

package planstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const testUID = "0b1c7a52-5f1e-4b61-9c57-2a4f3d9e0c11"

func mustSeal(t testing.TB, objs []Object, generation int64) Seal {
	t.Helper()
	s, err := NewSeal("p", testUID, generation, objs[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A seal records the SHA-256 of the index's bytes, as computed here from
// the published object, and the index's own plan hash.
func TestSealNamesTheIndexBytes(t *testing.T) {
	objs := mustEncode(t, "p", gqaP8D4(t))
	s := mustSeal(t, objs, 3)
	sum := sha256.Sum256([]byte(objs[0].Data[IndexKey]))
	if s.IndexSHA256 != hex.EncodeToString(sum[:]) || s.PlanHash != gqaP8D4(t).Hash() || s.Generation != 3 || s.UID != testUID || s.PDPair != "p" {
		t.Fatalf("seal %+v", s)
	}
	raw, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSeal(raw)
	if err != nil || back != s {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if _, err := NewSeal("q", testUID, 3, objs[0]); err == nil {
		t.Error("sealed p's index as q's")
	}
	if _, err := NewSeal("p", testUID, 3, objs[1]); err == nil {
		t.Error("sealed a shard as the index")
	}
}

// The seal's keys, like the index's, are read strictly: a change to them
// is a new SealFormatVersion.
func TestSealKeys(t *testing.T) {
	raw, err := WithdrawnSeal("p", testUID, 1).Encode()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	})
	if want := []string{"formatVersion", "generation", "indexSHA256", "pdpair", "planHash", "uid"}; !slices.Equal(got, want) {
		t.Fatalf("seal keys %v, want %v (a change needs a new SealFormatVersion)", got, want)
	}
}

func TestDecodeSealRejects(t *testing.T) {
	good := `"pdpair":"p","uid":"u","generation":2,"indexSHA256":"` + strings.Repeat("a", 64) + `","planHash":"` + strings.Repeat("b", 64) + `"`
	for name, c := range map[string]struct {
		raw    string
		reason Reason
		says   string
	}{
		"not JSON":            {`seal`, ReasonMalformedSeal, "seal.json"},
		"unknown field":       {`{"formatVersion":1,` + good + `,"key":"x"}`, ReasonMalformedSeal, `unknown field "key"`},
		"trailing data":       {`{"formatVersion":1,` + good + `} {}`, ReasonMalformedSeal, "trailing data"},
		"other version":       {`{"formatVersion":2,` + good + `}`, ReasonUnsupportedVersion, "formatVersion 2"},
		"no pair":             {`{"formatVersion":1,"uid":"u","generation":2}`, ReasonMalformedSeal, `pdpair ""`},
		"pair not a name":     {`{"formatVersion":1,"pdpair":"../x","uid":"u","generation":2}`, ReasonMalformedSeal, `pdpair "../x"`},
		"no uid":              {`{"formatVersion":1,"pdpair":"p","generation":2}`, ReasonMalformedSeal, `uid ""`},
		"generation 0":        {`{"formatVersion":1,"pdpair":"p","uid":"u","generation":0}`, ReasonMalformedSeal, "generation 0"},
		"short index hash":    {`{"formatVersion":1,"pdpair":"p","uid":"u","generation":2,"indexSHA256":"ab","planHash":"` + strings.Repeat("b", 64) + `"}`, ReasonMalformedSeal, `indexSHA256 "ab"`},
		"upper-case hash":     {`{"formatVersion":1,"pdpair":"p","uid":"u","generation":2,"indexSHA256":"` + strings.Repeat("A", 64) + `","planHash":"` + strings.Repeat("b", 64) + `"}`, ReasonMalformedSeal, "indexSHA256"},
		"no plan hash":        {`{"formatVersion":1,"pdpair":"p","uid":"u","generation":2,"indexSHA256":"` + strings.Repeat("a", 64) + `"}`, ReasonMalformedSeal, `planHash ""`},
		"plan hash alone":     {`{"formatVersion":1,"pdpair":"p","uid":"u","generation":2,"planHash":"` + strings.Repeat("b", 64) + `"}`, ReasonMalformedSeal, "without an indexSHA256"},
		"longer than a seal":  {`{"formatVersion":1,` + good + strings.Repeat(" ", 5000) + `}`, ReasonMalformedSeal, "at most 4096"},
		"generation overflow": {`{"formatVersion":1,"pdpair":"p","uid":"u","generation":99999999999999999999}`, ReasonMalformedSeal, "seal.json"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeSeal([]byte(c.raw))
			assertFormatError(t, err, c.reason, c.says)
		})
	}
	if s, err := DecodeSeal([]byte(`{"formatVersion":1,` + good + `}`)); err != nil || !s.Published() {
		t.Fatalf("a good seal: %+v %v", s, err)
	}
}

// The attack of issue 19, in a directory: a ConfigMap the operator did not
// write, projected under an unused shard name, brings its own index.json
// and rank file, and the kubelet lets the later source win. With the seal,
// the loader refuses it before decoding a byte of it, whatever it says.
func TestSealedLoadRefusesAShadowIndex(t *testing.T) {
	published := mustEncode(t, "p", gqaP8D4(t))
	seal := mustSeal(t, published, 4)
	// the attacker's: a plan set of another layout for the same pair name,
	// well formed, every hash in its index right
	forged := mustEncode(t, "p", mustPlan(t, kvLayout(8, 4, 2, 128, 256, 128)))
	dir := t.TempDir()
	projectAtomically(t, dir, "a", published)
	got, err := LoadSealedEngineRanksFromDir(dir, seal, []int{0, 3})
	if err != nil || got.PlanHash != seal.PlanHash || len(got.Plans) != 2 || got.Plans[1].DecodeTPRank != 3 {
		t.Fatalf("the sealed publication: %+v %v", got.PlanHash, err)
	}
	// the shadow, projected after the operator's objects, wins the
	// collision: index.json and rank-0000 are the attacker's
	shadow := []Object{published[0], published[1], {Name: "p-plans-31", Data: forged[0].Data, BinaryData: forged[1].BinaryData}}
	projectAtomically(t, dir, "b", shadow)
	if _, err := LoadEngineRanksFromDir(dir, []int{0}); err != nil {
		t.Fatalf("without a seal the shadow loads (this is the attack): %v", err)
	}
	_, err = LoadSealedEngineRanksFromDir(dir, seal, []int{0})
	assertFormatError(t, err, ReasonSealMismatch, "but the operator sealed "+seal.IndexSHA256+" for generation 4 of \"p\"")

	// a replay: had the operator published the forged plans at generation
	// 3, those very ConfigMaps, copied back now, are refused at generation 4
	older := mustSeal(t, forged, 3)
	projectAtomically(t, dir, "c", forged)
	if _, err := LoadSealedEngineRanksFromDir(dir, older, []int{0}); err != nil {
		t.Fatalf("generation 3's own seal: %v", err)
	}
	_, err = LoadSealedEngineRanksFromDir(dir, seal, []int{0})
	assertFormatError(t, err, ReasonSealMismatch, "generation 4")

	// a seal written for another index whose bytes happen to match cannot
	// exist; one naming another plan hash is refused after the bytes match
	wrong := seal
	wrong.IndexSHA256, wrong.PlanHash = older.IndexSHA256, seal.PlanHash
	_, err = LoadSealedEngineRanksFromDir(dir, wrong, []int{0})
	assertFormatError(t, err, ReasonSealMismatch, "but the seal is for")
}

// Withdrawn: nothing is trusted, not even the operator's last publication.
func TestWithdrawnSealTrustsNoIndex(t *testing.T) {
	published := mustEncode(t, "p", gqaP8D4(t))
	_, err := LoadSealedEngineRanks(published, WithdrawnSeal("p", testUID, 5), []int{0})
	assertFormatError(t, err, ReasonNotPublished, "generation 5")
}

func TestReadSealDir(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadSealDir(dir)
	assertFormatError(t, err, ReasonMissingSeal, "not sealed plans for this pair yet")
	s := mustSeal(t, mustEncode(t, "p", gqaP8D4(t)), 2)
	raw, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	projectAtomically(t, dir, "a", []Object{{Name: SealSecretName("p"), BinaryData: map[string][]byte{SealKey: raw}}})
	if got, err := ReadSealDir(dir); err != nil || got != s {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := ReadSealDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing directory read as a seal")
	}
}

// FuzzSealedLoad: arbitrary seal and index bytes. Nothing panics, and
// nothing loads unless the index's bytes are exactly the ones the seal names.
func FuzzSealedLoad(f *testing.F) {
	objs := mustEncode(f, "p", mustPlan(f, kvLayout(8, 4, 2, 128, 256, 128)))
	sealRaw, err := mustSeal(f, objs, 1).Encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sealRaw, []byte(objs[0].Data[IndexKey]))
	f.Add(sealRaw, []byte(`{"formatVersion":1}`))
	f.Add([]byte(`{"formatVersion":1,"pdpair":"p","uid":"u","generation":1}`), []byte(objs[0].Data[IndexKey]))
	f.Fuzz(func(t *testing.T, sealBytes, index []byte) {
		seal, err := DecodeSeal(sealBytes)
		if err != nil {
			return
		}
		o := []Object{{Name: "p-plans", Data: map[string]string{IndexKey: string(index)}}, objs[1]}
		if _, err := LoadSealedEngineRanks(o, seal, []int{1}); err == nil {
			sum := sha256.Sum256(index)
			if hex.EncodeToString(sum[:]) != seal.IndexSHA256 {
				t.Fatalf("loaded an index of SHA-256 %x under a seal for %s", sum, seal.IndexSHA256)
			}
		}
	})
}

// FuzzDecodeSeal: whatever DecodeSeal accepts encodes back to a seal it
// accepts again, equal.
func FuzzDecodeSeal(f *testing.F) {
	raw, _ := WithdrawnSeal("p", testUID, 1).Encode()
	f.Add(raw)
	f.Add([]byte(`{"formatVersion":1,"pdpair":"p","uid":"u","generation":2,"indexSHA256":"` + strings.Repeat("a", 64) + `","planHash":"` + strings.Repeat("b", 64) + `"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := DecodeSeal(raw)
		if err != nil {
			return
		}
		again, err := s.Encode()
		if err != nil {
			t.Fatalf("accepted %q but cannot encode it: %v", raw, err)
		}
		back, err := DecodeSeal(again)
		if err != nil || back != s {
			t.Fatalf("%q → %+v → %q → %+v %v", raw, s, again, back, err)
		}
	})
}

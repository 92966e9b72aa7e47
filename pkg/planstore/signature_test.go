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
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func testSigner(seed byte) *Signer {
	s := make([]byte, ed25519.SeedSize)
	s[0] = seed
	return NewSigner(ed25519.NewKeyFromSeed(s))
}

func signedIndex(t testing.TB, s *Signer, generation int64) Object {
	t.Helper()
	objs := mustEncode(t, "p", mustPlan(t, kvLayout(8, 4, 2, 128, 256, 128)))
	idx := objs[0]
	if err := s.Sign("team-a", "p", "uid-1", generation, &idx); err != nil {
		t.Fatal(err)
	}
	return idx
}

func wantReason(t *testing.T, err error, reason Reason) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Reason != reason {
		t.Fatalf("got %v, want reason %s", err, reason)
	}
}

// A signature verifies for its pair only, with the signer's key only, and
// any byte a tenant changes in it makes it fail.
func TestSignatureVerifiesForItsPairOnly(t *testing.T) {
	s := testSigner(1)
	keys, err := ParsePublicKeys(EncodePublicKey(s.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	idx := signedIndex(t, s, 3)
	raw := []byte(idx.Data[SignatureKey])
	st, err := keys.VerifyFor(raw, "team-a", "p", "uid-1")
	if err != nil || st.Generation != 3 {
		t.Fatalf("%+v %v", st, err)
	}
	if _, err := LoadSealedIndex([]Object{idx}, st.Seal()); err != nil {
		t.Fatalf("the signed index: %v", err)
	}
	_, err = keys.VerifyFor(raw, "team-b", "p", "")
	wantReason(t, err, ReasonBadSignature)
	_, err = keys.VerifyFor(raw, "team-a", "q", "")
	wantReason(t, err, ReasonBadSignature)
	other, _ := ParsePublicKeys(EncodePublicKey(testSigner(2).PublicKey()))
	_, err = other.VerifyFor(raw, "team-a", "p", "")
	wantReason(t, err, ReasonBadSignature)

	// A tenant's edits: another generation, another index hash, its own key.
	var sig Signature
	if err := json.Unmarshal(raw, &sig); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Signature){
		"generation": func(s *Signature) { s.Generation++ },
		"index":      func(s *Signature) { s.IndexSHA256 = strings.Repeat("0", 64) },
		"uid":        func(s *Signature) { s.UID = "uid-2" },
		"signature":  func(s *Signature) { s.Signature = sig.Signature[:4] + "AAAA" + sig.Signature[8:] },
	} {
		forged := sig
		edit(&forged)
		b, _ := json.Marshal(forged)
		if _, err := keys.VerifyFor(b, "team-a", "p", ""); err == nil {
			t.Errorf("%s edited: verified", name)
		}
	}
	// The index bytes changed under a good signature: SealMismatch.
	tampered := idx
	tampered.Data = map[string]string{IndexKey: strings.Replace(idx.Data[IndexKey], `"p"`, `"p" `, 1), SignatureKey: idx.Data[SignatureKey]}
	_, err = LoadSealedIndex([]Object{tampered}, st.Seal())
	wantReason(t, err, ReasonSealMismatch)
}

func TestParsePublicKeys(t *testing.T) {
	a, b := EncodePublicKey(testSigner(1).PublicKey()), EncodePublicKey(testSigner(2).PublicKey())
	keys, err := ParsePublicKeys(a + ", " + b + ",")
	if err != nil || len(keys) != 2 {
		t.Fatalf("%v %v", keys, err)
	}
	for _, bad := range []string{"", ",", "not-base64!", "AAAA"} {
		if _, err := ParsePublicKeys(bad); err == nil {
			t.Errorf("%q: parsed", bad)
		}
	}
}

// FuzzDecodeSignature: index.sig is written by whoever can write the
// pair's ConfigMaps; decoding answers with an error, never a panic, and
// nothing but the signer's statements verify.
func FuzzDecodeSignature(f *testing.F) {
	s := testSigner(1)
	keys, _ := ParsePublicKeys(EncodePublicKey(s.PublicKey()))
	good := signedIndex(f, s, 2).Data[SignatureKey]
	f.Add([]byte(good))
	f.Add([]byte(`{"formatVersion":1}`))
	f.Add([]byte(strings.Replace(good, `"generation":2`, `"generation":3`, 1)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := keys.DecodeSignature(raw)
		if err != nil {
			return
		}
		if st.Generation != 2 || st.Namespace != "team-a" || st.PDPair != "p" || st.UID != "uid-1" {
			t.Fatalf("a statement the signer never made verified: %+v", st)
		}
	})
}

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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The operator signs every set: plansets.sig names plansets.json's bytes
// and the current plan hash, under its own domain, so neither signature
// passes for the other, and a sets index a tenant edited is refused.
func TestSetsSignatureCoversEverySet(t *testing.T) {
	s := testSigner(1)
	keys, err := ParsePublicKeys(EncodePublicKey(s.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	p8, p4 := small(t, 8, 4), small(t, 4, 4)
	objs := mustEncodeSets(t, p8, p4).Objects
	if err := s.Sign("team-a", "p", "uid-1", 7, &objs[0]); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeObjects(t, dir, objs)
	st, err := ReadSetsSignatureDir(dir, keys, "team-a", "p")
	if err != nil || st.PlanHash != p8.Hash() || st.Generation != 7 {
		t.Fatalf("sets signature: %+v, %v", st, err)
	}
	got, err := LoadSealedEngineRankSetsFromDir(dir, st.Seal(), []int{2})
	if err != nil || len(got.Sets) != 2 || got.Sets[1].PlanHash != p4.Hash() {
		t.Fatalf("sealed load: %+v, %v", got, err)
	}
	// index.sig still states index.json, for older agents
	if ist, err := ReadSignatureDir(dir, keys, "team-a", "p"); err != nil || ist.IndexSHA256 == st.IndexSHA256 || ist.PlanHash != p8.Hash() {
		t.Fatalf("index signature: %+v, %v", ist, err)
	}
	// each signature under the other's name
	_, err = keys.DecodeSetsSignature([]byte(objs[0].Data[SignatureKey]))
	wantReason(t, err, ReasonBadSignature)
	_, err = keys.DecodeSignature([]byte(objs[0].Data[SetsSignatureKey]))
	wantReason(t, err, ReasonBadSignature)

	// a tenant drops set 1's entry of rank 3 for one of its own: the sets
	// index no longer has the signed bytes
	edited := strings.Replace(objs[0].Data[SetsKey], `"rank":3`, `"rank":3 `, 1)
	writeFile(t, filepath.Join(dir, SetsKey), []byte(edited))
	_, err = LoadSealedEngineRankSetsFromDir(dir, st.Seal(), []int{2})
	wantReason(t, err, ReasonSealMismatch)
	// and without plansets.json a sealed load refuses rather than fall back
	if err := os.Remove(filepath.Join(dir, SetsKey)); err != nil {
		t.Fatal(err)
	}
	_, err = LoadSealedEngineRankSetsFromDir(dir, st.Seal(), []int{2})
	wantReason(t, err, ReasonMissingIndex)
}

// One set: nothing but index.json and index.sig, as before.
func TestOneSetHasNoSetsSignature(t *testing.T) {
	objs := mustEncodeSets(t, small(t, 8, 4)).Objects
	if err := testSigner(1).Sign("team-a", "p", "uid-1", 7, &objs[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok := objs[0].Data[SetsSignatureKey]; ok || len(objs[0].Data) != 2 {
		t.Fatalf("one set: keys %v", objs[0].Data)
	}
}

// writeObjects writes every key of objs into dir, as a projected volume does.
func writeObjects(t *testing.T, dir string, objs []Object) {
	t.Helper()
	for _, o := range objs {
		for k, v := range o.Data {
			writeFile(t, filepath.Join(dir, k), []byte(v))
		}
		for k, v := range o.BinaryData {
			writeFile(t, filepath.Join(dir, k), v)
		}
	}
}

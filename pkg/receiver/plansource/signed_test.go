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

package plansource

import (
	"context"
	"crypto/ed25519"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

var testSigner = planstore.NewSigner(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)))

// signed is objects with the index signed for team-a/pair at generation.
func signed(t *testing.T, objects []planstore.Object, uid string, generation int64) []planstore.Object {
	t.Helper()
	out := slices.Clone(objects)
	idx := out[0]
	idx.Data = map[string]string{planstore.IndexKey: idx.Data[planstore.IndexKey]}
	if err := testSigner.Sign("team-a", "pair", uid, generation, &idx); err != nil {
		t.Fatal(err)
	}
	out[0] = idx
	return out
}

// A signed plan directory loads only what the operator signed for the pair:
// a tenant's plans (with or without a signature of its own, or the
// operator's signature of other bytes) are refused, a replay of an older
// generation's signed publication is refused once a newer one was loaded
// (or below the floor the pod was given), and so is another pair's.
func TestSignedDirSource(t *testing.T) {
	ctx := context.Background()
	keys, err := planstore.ParsePublicKeys(planstore.EncodePublicKey(testSigner.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, firstHash := receivertest.Publish(t, "pair", dpDecode())
	second, secondHash := receivertest.Publish(t, "pair", fixtures.MHA(8, 8, fixtures.Buffers(2, 128, 128, 128)))
	forged, _ := receivertest.Publish(t, "pair", dpDecode2Layers())
	src := Dir{Path: dir, EngineRanks: []int{5}, Signed: NewSigned(keys, "team-a", "pair", 0)}
	load := func(gen int, objs []planstore.Object) (Plans, error) {
		receivertest.ProjectPlans(t, dir, gen, objs)
		return src.Load(ctx)
	}
	refused := func(what string, reason planstore.Reason, gen int, objs []planstore.Object) {
		t.Helper()
		if p, err := load(gen, objs); err == nil || !strings.Contains(err.Error(), string(reason)) {
			t.Errorf("%s: loaded %q, err %v; want %s", what, p.Hash, err, reason)
		}
	}
	refused("unsigned plans", planstore.ReasonMissingSignature, 1, first)
	if p, err := load(2, signed(t, first, "uid-1", 3)); err != nil || p.Hash != firstHash {
		t.Fatalf("generation 3: %q %v", p.Hash, err)
	}
	// the tenant's plans under the operator's signature of generation 3
	tampered := signed(t, forged, "uid-1", 3)
	tampered[0].Data[planstore.SignatureKey] = signed(t, first, "uid-1", 3)[0].Data[planstore.SignatureKey]
	refused("forged plans, the operator's signature", planstore.ReasonSealMismatch, 3, tampered)
	other := planstore.NewSigner(ed25519.NewKeyFromSeed(append(make([]byte, ed25519.SeedSize-1), 1)))
	byTenant := slices.Clone(forged)
	byTenant[0].Data = map[string]string{planstore.IndexKey: forged[0].Data[planstore.IndexKey]}
	if err := other.Sign("team-a", "pair", "uid-1", 9, &byTenant[0]); err != nil {
		t.Fatal(err)
	}
	refused("the tenant's own key", planstore.ReasonBadSignature, 4, byTenant)
	if p, err := load(5, signed(t, second, "uid-1", 4)); err != nil || p.Hash != secondHash {
		t.Fatalf("generation 4: %q %v", p.Hash, err)
	}
	refused("generation 3 replayed", planstore.ReasonStaleGeneration, 6, signed(t, first, "uid-1", 3))
	refused("the same name's older instance", planstore.ReasonBadSignature, 7, signed(t, first, "uid-0", 9))

	fresh := Dir{Path: dir, EngineRanks: []int{5}, Signed: NewSigned(keys, "team-a", "pair", 4)}
	receivertest.ProjectPlans(t, dir, 8, signed(t, first, "uid-1", 3))
	if _, err := fresh.Load(ctx); err == nil || !strings.Contains(err.Error(), string(planstore.ReasonStaleGeneration)) {
		t.Errorf("below the pod's floor: %v", err)
	}
	elsewhere := Dir{Path: dir, EngineRanks: []int{5}, Signed: NewSigned(keys, "team-b", "pair", 0)}
	if _, err := elsewhere.Load(ctx); err == nil || !strings.Contains(err.Error(), string(planstore.ReasonBadSignature)) {
		t.Errorf("another namespace's pair: %v", err)
	}
}

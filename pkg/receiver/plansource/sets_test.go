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
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// publishSets encodes layouts as one publication (the first current),
// signed for team-a/pair at generation, and returns the plan hashes.
func publishSets(t *testing.T, generation int64, layouts ...planv1.Layout) ([]planstore.Object, []string) {
	t.Helper()
	return publishSetsFor(t, "team-a", "uid-1", generation, layouts...)
}

// publishSetsFor is publishSets for the pair "pair" in namespace, of uid.
func publishSetsFor(t *testing.T, namespace, uid string, generation int64, layouts ...planv1.Layout) ([]planstore.Object, []string) {
	t.Helper()
	var in [][]planstore.Object
	var hashes []string
	for _, l := range layouts {
		set := fixtures.MustPlan(l)
		objs, err := planstore.Encode("pair", set)
		if err != nil {
			t.Fatal(err)
		}
		in, hashes = append(in, objs), append(hashes, set.Hash())
	}
	pub, err := planstore.EncodeSets("pair", in)
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(pub.Objects)
	out[0].Data = maps.Clone(out[0].Data)
	if err := testSigner.Sign(namespace, "pair", uid, generation, &out[0]); err != nil {
		t.Fatal(err)
	}
	return out, hashes
}

// A signed plan directory of several sets loads every set the operator
// signed for the agent's decode layout, the current first; without
// plansets.sig it is the signed index.json alone, never an unsigned set.
func TestSignedDirLoadsEverySet(t *testing.T) {
	ctx := context.Background()
	keys, err := planstore.ParsePublicKeys(planstore.EncodePublicKey(testSigner.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	p4, p8 := fixtures.MHA(4, 4, fixtures.Buffers(2, 256, 256, 128)), fixtures.MHA(8, 4, fixtures.Buffers(2, 128, 256, 128))
	p8d2 := fixtures.MHA(8, 2, fixtures.Buffers(2, 128, 512, 128))
	objs, hashes := publishSets(t, 5, p4, p8, p8d2)
	d2, d8 := transferplan.Parallelism{TPSize: 2, DPSize: 1}, transferplan.Parallelism{TPSize: 8, DPSize: 1}
	withoutSetsSig := slices.Clone(objs)
	withoutSetsSig[0].Data = maps.Clone(objs[0].Data)
	delete(withoutSetsSig[0].Data, planstore.SetsSignatureKey)
	oneSet := slices.Clone(withoutSetsSig)
	oneSet[0].Data = maps.Clone(withoutSetsSig[0].Data)
	delete(oneSet[0].Data, planstore.SetsKey)
	otherSets, _ := publishSets(t, 5, p4, fixtures.MHA(2, 4, fixtures.Buffers(2, 512, 256, 128)))
	swapped := slices.Clone(objs)
	swapped[0].Data = maps.Clone(objs[0].Data)
	swapped[0].Data[planstore.SetsKey] = otherSets[0].Data[planstore.SetsKey]
	cases := []struct {
		name   string
		objs   []planstore.Object
		decode *transferplan.Parallelism
		want   []string // Ranks' hash, then each alternate's
		reason planstore.Reason
		// setsRefused is why plansets.json was not loaded beside the
		// index ("" when it loaded or is absent)
		setsRefused planstore.Reason
	}{
		{name: "the current set's decode layout", objs: objs, want: hashes[:2]},
		{name: "one set: no plansets.json, nothing refused", objs: oneSet, want: hashes[:1]},
		{name: "admitted under decode TP 2", objs: objs, decode: &d2, want: hashes[2:]},
		{name: "admitted under a decode layout never published", objs: objs, decode: &d8, reason: planstore.ReasonDecodeLayoutNotPublished},
		{name: "no plansets.sig: the signed index alone", objs: withoutSetsSig, want: hashes[:1], setsRefused: planstore.ReasonMissingSignature},
		{name: "no plansets.sig, admitted under decode TP 2", objs: withoutSetsSig, decode: &d2, reason: planstore.ReasonDecodeLayoutNotPublished},
		{name: "another sets index under the operator's signature", objs: swapped, reason: planstore.ReasonSealMismatch},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			receivertest.ProjectPlans(t, dir, i+1, tc.objs)
			p, err := Dir{Path: dir, EngineRanks: []int{1}, Signed: NewSigned(keys, "team-a", "pair", 0), DecodeLayout: tc.decode}.Load(ctx)
			if tc.reason != "" {
				if err == nil || !strings.Contains(err.Error(), string(tc.reason)) {
					t.Fatalf("loaded %q, err %v; want %s", p.Hash, err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{p.Hash}
			for _, a := range p.Alternates {
				got = append(got, a[0].Hash)
			}
			if !slices.Equal(got, tc.want) || p.Ranks[0].Hash != p.Hash {
				t.Fatalf("loaded sets %v, want %v", got, tc.want)
			}
			if planstore.ReasonOf(p.SetsRefused) != tc.setsRefused {
				t.Fatalf("SetsRefused %v, want reason %q", p.SetsRefused, tc.setsRefused)
			}
		})
	}
}

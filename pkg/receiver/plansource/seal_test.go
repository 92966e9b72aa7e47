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
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
)

// projectSeal writes the operator's seal for objects into dir, as the
// kubelet fills the seal Secret's volume.
func projectSeal(t *testing.T, dir string, generation int, seal planstore.Seal) {
	t.Helper()
	raw, err := seal.Encode()
	if err != nil {
		t.Fatal(err)
	}
	receivertest.ProjectPlans(t, dir, generation, []planstore.Object{{Name: planstore.SealSecretName(seal.PDPair), BinaryData: map[string][]byte{planstore.SealKey: raw}}})
}

func sealOf(t *testing.T, objects []planstore.Object, generation int64) planstore.Seal {
	t.Helper()
	s, err := planstore.NewSeal("pair", "uid-1", generation, objects[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A sealed plan directory: the agent loads the sealed publication; when
// the kubelet shows an index the operator did not seal, a running agent
// keeps its plans and says why (SealMismatch); when the seal moves to a
// new publication before the ConfigMaps reach the pod, it waits; once both
// agree it loads the new plans. The seal directory's own updates wake the
// follower.
func TestSealedDirSource(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	plans, sealDir := t.TempDir(), t.TempDir()
	first, firstHash := receivertest.Publish(t, "pair", dpDecode())
	second, secondHash := receivertest.Publish(t, "pair", fixtures.MHA(8, 8, fixtures.Buffers(2, 128, 128, 128)))
	forged, forgedHash := receivertest.Publish(t, "pair", dpDecode2Layers())
	receivertest.ProjectPlans(t, plans, 1, first)
	projectSeal(t, sealDir, 1, sealOf(t, first, 1))
	src := Dir{Path: plans, SealDir: sealDir, EngineRanks: []int{5}}
	if !strings.Contains(src.Describe(), "sealed by "+sealDir) {
		t.Errorf("Describe() = %q", src.Describe())
	}
	loaded, err := Load(ctx, src)
	if err != nil || loaded.Plans.Hash != firstHash {
		t.Fatalf("the sealed publication: %+v %v", loaded.Plans.Hash, err)
	}
	rec := &recorder{failed: map[string]int{}}
	f := &Follower{Source: src, Resync: time.Hour, Apply: rec.apply, Report: rec.reportErr, Failed: rec.fail, Log: slog.New(slog.DiscardHandler)}
	go f.Run(ctx, loaded)

	// someone else's index and rank files where the plans are projected
	receivertest.ProjectPlans(t, plans, 2, append(append([]planstore.Object{}, first...), forged...))
	rec.waitFor(t, nil, string(planstore.ReasonSealMismatch))
	// the seal moves on first: the old index is not trusted either
	projectSeal(t, sealDir, 2, sealOf(t, second, 2))
	rec.waitFor(t, nil, "the operator sealed")
	receivertest.ProjectPlans(t, plans, 3, second)
	rec.waitFor(t, []string{secondHash}, "")
	if forgedHash == secondHash || forgedHash == firstHash {
		t.Fatal("the forged plans are a published set")
	}

	// an unsealed Dir (a hand-made directory) loads whatever is there
	receivertest.ProjectPlans(t, plans, 4, forged)
	if p, err := (Dir{Path: plans, EngineRanks: []int{5}}).Load(ctx); err != nil || p.Hash != forgedHash {
		t.Fatalf("an unsealed directory: %v %v", p.Hash, err)
	}
	if _, err := (Dir{Path: plans, SealDir: t.TempDir(), EngineRanks: []int{5}}).Load(ctx); err == nil || !strings.Contains(err.Error(), string(planstore.ReasonMissingSeal)) {
		t.Fatalf("an empty seal directory: %v", err)
	}
}

// dpDecode2Layers is dpDecode with fewer layers: another plan set for the
// same fleet.
func dpDecode2Layers() planv1.Layout {
	l := dpDecode()
	half := len(l.KVBuffers) / 2
	l.KVBuffers = append(l.KVBuffers[:1:1], l.KVBuffers[half])
	return l
}

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

package controllers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// publishedSet loads the plan set back from the PDPair's ConfigMaps on the
// API server, verifying every hash on the way.
func publishedSet(t *testing.T, p *pdv1.PDPair) *transferplan.PlanSet {
	t.Helper()
	var objs []planstore.Object
	for _, cm := range planConfigMaps(t, p) {
		objs = append(objs, planObject(&cm))
	}
	set, err := planstore.LoadPlanSet(objs)
	if err != nil {
		t.Fatalf("loading the published plans of %s: %v", p.Name, err)
	}
	return set
}

// plannedJSON is what `pdtopo plan -o json` prints for the object's spec as
// the API server holds it (defaults applied).
func plannedJSON(t *testing.T, p *pdv1.PDPair) []byte {
	t.Helper()
	if p.Spec.WireOrDefault() == pdv1.WireCacheContract {
		cp, _, err := tokenspeed.ContractPairFromSpec(p.Spec, engine.ReadInline)
		if err != nil {
			t.Fatal(err)
		}
		set, err := plancontract.Plan(cp)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(set)
		return b
	}
	layout, err := tokenspeed.FromSpec(p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	set, err := planv1.Plan(layout)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(set)
	return b
}

// Every sample a newcomer applies: its ConfigMaps hold exactly what the
// planner (and `pdtopo plan`) computes, and the status summary agrees.
func TestSamplesPublishWhatThePlannerPlans(t *testing.T) {
	ns := newNamespace(t)
	files, _ := filepath.Glob(filepath.Join(env.Root, "config", "samples", "pd_*.yaml"))
	if len(files) < 7 {
		t.Fatalf("found %d samples in config/samples, want at least 7", len(files))
	}
	var pairs []*pdv1.PDPair
	for _, f := range files {
		p := readSample(t, f)
		p.Namespace = ns
		create(t, p)
		pairs = append(pairs, p)
	}
	for _, p := range pairs {
		t.Run(p.Name, func(t *testing.T) {
			want, ok := sampleOutcomes[p.Name]
			if !ok {
				t.Fatalf("sample %s has no expected outcome in sampleOutcomes: work it out and add it", p.Name)
			}
			got := waitObserved(t, p)
			if want.noPlans {
				wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
				wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
				wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonEngineLoadsNoPlans)
				if n := len(planConfigMaps(t, got)); n != 0 {
					t.Fatalf("a sample of an engine without plans has %d plan ConfigMaps", n)
				}
				return
			}
			if want.reason != "" {
				wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionFalse, want.reason)
				if n := len(planConfigMaps(t, got)); n != 0 {
					t.Fatalf("an incompatible sample has %d plan ConfigMaps", n)
				}
				return
			}
			wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
			published, _ := json.Marshal(publishedSet(t, got))
			planned := plannedJSON(t, got)
			if !bytes.Equal(published, planned) {
				t.Fatal("the published plans differ from `pdtopo plan -o json`")
			}
			wantSummary(t, got, want.summary, planned)
		})
	}
	if len(pairs) != len(sampleOutcomes) {
		t.Errorf("%d samples, %d expected outcomes: a sample was removed or renamed", len(pairs), len(sampleOutcomes))
	}
}

// sampleOutcome is what a sample must come to: a LayoutCompatible=False
// reason, or the plan summary of its status.
type sampleOutcome struct {
	reason  pdv1.PDPairConditionReason
	summary pdv1.PlanSummary
	// noPlans: the sample's engine (vllm, sglang) moves the KV cache
	// itself; compatible and Ready without plans.
	noPlans bool
}

// sampleOutcomes are worked out by hand from the samples' layouts and the
// planning rules (docs/), not by the planner, so that a planner or a
// controller that summarises wrongly fails. Hash, bytes and ConfigMap
// names are checked apart (wantSummary).
var sampleOutcomes = map[string]sampleOutcome{
	// vLLM P4 → D2 and SGLang P4 → D8 with DP attention 2 over 8 KV heads:
	// compatible under the engines' rules (docs/engines/), no plans.
	"llama31-8b-vllm-nixl-p4-d2":    {noPlans: true},
	"qwen3-32b-sglang-dp-attention": {noPlans: true},
	// The engine's contracts of 2 layers of 8 KV heads (K and V fields of
	// 16-token pages): one head per prefill rank, two per decode rank, so
	// decode rank d pulls each of the 4 fields from prefill ranks 2d and
	// 2d+1 (4 × 2 × 4 fragments), one 128-byte head of each of the 16 token
	// rows of a page into its 256-byte rows.
	"contract-gqa8-p8-d4": {summary: pdv1.PlanSummary{
		Kind: "fragmented", DecodeTPRanks: 4, MinTargetsPerDecodeRank: 2, MaxTargetsPerDecodeRank: 2,
		PrefillFanOut: []int32{1, 1, 1, 1, 1, 1, 1, 1}, MaxPrefillFanOut: 1, FragmentCount: 32,
		FragmentsPerPage: 16, PageCost: "16 copies per page for each field fragment a decode rank pulls from a prefill rank: " +
			`field "layer.0.k" takes 128 of every 128-byte row of the prefill's page into 256-byte rows, for each of the 16 rows of a page`,
	}},
	// prefill fp8 units of 128 bytes, decode bf16 256: the units differ.
	"incompatible-fp8-prefill-bf16-decode": {reason: pdv1.ReasonUnitSizeMismatch},
	// 8 heads: one per prefill rank, two per decode rank; decode rank d
	// pulls heads 2d and 2d+1 of each of 160 buffers: 4 × 160 × 2 fragments.
	"llama3-70b-gqa-p8-d4": {summary: pdv1.PlanSummary{
		Kind: "fragmented", DecodeTPRanks: 4, MinTargetsPerDecodeRank: 2, MaxTargetsPerDecodeRank: 2,
		PrefillFanOut: []int32{1, 1, 1, 1, 1, 1, 1, 1}, MaxPrefillFanOut: 1, FragmentCount: 1280,
		FragmentsPerPage: 1, PageCost: "1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token",
	}},
	// The same with 16-token pages: each prefill rank's head is one slot of
	// each of the 16 token rows of a decode page: 4 × 160 × 2 × 16 fragments.
	"llama3-70b-gqa-p8-d4-16-tokens": {summary: pdv1.PlanSummary{
		Kind: "fragmented", DecodeTPRanks: 4, MinTargetsPerDecodeRank: 2, MaxTargetsPerDecodeRank: 2,
		PrefillFanOut: []int32{1, 1, 1, 1, 1, 1, 1, 1}, MaxPrefillFanOut: 1, FragmentCount: 20480,
		FragmentsPerPage: 16, PageCost: "16 fragments per page for each buffer a decode rank pulls from a prefill rank: " +
			"decode rank 0 takes 1 of prefill rank 0's 1 heads (256-byte units) from each of the 16 token rows of a page into its 2-head rows; " +
			"pages are token-major, so each row is a separate fragment",
	}},
	// Qwen3.5-27B at TP 4 on both sides: prefill rank d sends decode rank d
	// whole items of its 34 KV and 96 state buffers; no fragments.
	"qwen35-27b-hybrid-p4-d4": {summary: pdv1.PlanSummary{
		Kind: "identity", DecodeTPRanks: 4, MinTargetsPerDecodeRank: 1, MaxTargetsPerDecodeRank: 1,
		PrefillFanOut: []int32{1, 1, 1, 1}, MaxPrefillFanOut: 1,
		PageCost: "whole items: each prefill rank copies whole pages, no fragments",
	}},
	// L1.5: every decode rank pulls from all 8 prefill ranks.
	"deepseek-v3-mla-l15-p8-d4": {summary: pdv1.PlanSummary{
		Kind: "mla", DecodeTPRanks: 4, MinTargetsPerDecodeRank: 8, MaxTargetsPerDecodeRank: 8,
		PrefillFanOut: []int32{4, 4, 4, 4, 4, 4, 4, 4}, MaxPrefillFanOut: 4,
		PageCost: "whole items: each prefill rank copies whole pages, no fragments",
	}},
	// P16 → D8: decode rank d targets 2d (real) and 2d+1 (dummy).
	"deepseek-v3-mla-p16-d8": {summary: pdv1.PlanSummary{
		Kind: "mla", DecodeTPRanks: 8, MinTargetsPerDecodeRank: 2, MaxTargetsPerDecodeRank: 2,
		PrefillFanOut: []int32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, MaxPrefillFanOut: 1,
		PageCost: "whole items: each prefill rank copies whole pages, no fragments",
	}},
	// decode TP 16 in 8 DP groups: 2 TP ranks per group, plans for 2;
	// prefill 8 → decode rank d targets 4d (real) and 4d+1..4d+3 (dummies).
	"deepseek-v3-dp-attention": {summary: pdv1.PlanSummary{
		Kind: "mla", DecodeTPRanks: 2, MinTargetsPerDecodeRank: 4, MaxTargetsPerDecodeRank: 4,
		PrefillFanOut: []int32{1, 1, 1, 1, 1, 1, 1, 1}, MaxPrefillFanOut: 1,
		PageCost: "whole items: each prefill rank copies whole pages, no fragments",
	}},
	// 8 heads over 16 prefill ranks: replica groups of 2, so only even
	// ranks are sources; decode rank d (heads 4d..4d+3) pulls from prefill
	// ranks 8d, 8d+2, 8d+4, 8d+6: 2 × 160 × 4 fragments; odd ranks idle.
	"llama3-70b-replicated-p16-d2": {summary: pdv1.PlanSummary{
		Kind: "fragmented", DecodeTPRanks: 2, MinTargetsPerDecodeRank: 4, MaxTargetsPerDecodeRank: 4,
		PrefillFanOut: []int32{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}, MaxPrefillFanOut: 1,
		IdlePrefillTPRanks: []int32{1, 3, 5, 7, 9, 11, 13, 15}, FragmentCount: 1280,
		FragmentsPerPage: 1, PageCost: "1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token",
	}},
}

func readSample(t *testing.T, path string) *pdv1.PDPair {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pairs, err := manifest.ReadPDPairs(f)
	if err != nil || len(pairs) != 1 {
		t.Fatalf("%s: %d PDPairs, %v", path, len(pairs), err)
	}
	return &pairs[0]
}

func mustLayout(t *testing.T, p *pdv1.PDPair) planv1.Layout {
	t.Helper()
	l, err := tokenspeed.FromSpec(p.Spec)
	if err != nil && !transferplan.IsInvalidLayout(err) {
		t.Fatal(err)
	}
	return l
}

// wantSummary checks status.plan against the expected summary; the hash is
// the SHA-256 of the plan set's JSON (planned: what `pdtopo plan -o json`
// prints), the bytes are those of the ConfigMaps read back, and the
// ConfigMaps are the index then the one shard a sample needs.
func wantSummary(t *testing.T, p *pdv1.PDPair, want pdv1.PlanSummary, planned []byte) {
	t.Helper()
	got := p.Status.Plan
	if got == nil {
		t.Fatal("no status.plan")
	}
	sum := sha256.Sum256(planned)
	want.Hash = hex.EncodeToString(sum[:])
	want.ConfigMaps = []string{p.Name + "-plans", p.Name + "-plans-0"}
	for _, cm := range planConfigMaps(t, p) {
		if cm.Name == p.Name+"-plans" { // the index the agents check against status.plan.indexSHA256
			index := sha256.Sum256([]byte(cm.Data[planstore.IndexKey]))
			want.IndexSHA256 = hex.EncodeToString(index[:])
		}
		for k, v := range cm.Data {
			want.PublishedBytes += int64(len(k) + len(v))
		}
		for k, v := range cm.BinaryData {
			want.PublishedBytes += int64(len(k) + len(v))
		}
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("status.plan = %+v\nwant %+v", *got, want)
	}
}

// Every plan ConfigMap is controlled by its PDPair (so it is garbage
// collected with it), labelled, and stamped with the plan hash.
func TestConfigMapsAreOwnedAndLabelled(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "owned").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	cms := planConfigMaps(t, got)
	if len(cms) != 2 {
		t.Fatalf("ConfigMaps %v, want the index and one shard", configMapNames(cms))
	}
	for _, cm := range cms {
		ref := metav1.GetControllerOf(&cm)
		if ref == nil || ref.UID != got.UID || ref.Kind != "PDPair" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
			t.Errorf("%s: controller reference %+v, want the PDPair blocking deletion", cm.Name, ref)
		}
		if cm.Labels[pdv1.LabelPDPair] != "owned" || cm.Annotations[pdv1.AnnotationPlanHash] != got.Status.Plan.Hash {
			t.Errorf("%s: labels %v annotations %v", cm.Name, cm.Labels, cm.Annotations)
		}
	}
}

// Deleting a published ConfigMap, editing its plan bytes, stripping its
// label or its owner reference: each is undone.
func TestPublishedConfigMapsAreRestored(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "restore").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	want := encodedPlans(t, got)
	if err := samePublication(t, got, client.ObjectKeyFromObject(got), want); err == nil || !strings.Contains(err.Error(), "not found") {
		// the PDPair's own name is no ConfigMap: a sanity check of the helper
		t.Fatalf("samePublication on a non-ConfigMap: %v", err)
	}
	ctx := context.Background()
	shard := client.ObjectKey{Namespace: ns, Name: planstore.ShardConfigMapName("restore", 0)}
	index := client.ObjectKey{Namespace: ns, Name: planstore.IndexConfigMapName("restore")}
	vandalism := map[string]func(*corev1.ConfigMap) error{
		"delete the shard": func(cm *corev1.ConfigMap) error { return k8s.Delete(ctx, cm) },
		"edit a rank's bytes": func(cm *corev1.ConfigMap) error {
			cm.BinaryData[planstore.RankKey(1)] = []byte("not a plan")
			return k8s.Update(ctx, cm)
		},
		"add a key": func(cm *corev1.ConfigMap) error {
			cm.BinaryData["extra"] = []byte("x")
			return k8s.Update(ctx, cm)
		},
		"remove the PDPair label": func(cm *corev1.ConfigMap) error {
			delete(cm.Labels, pdv1.LabelPDPair)
			return k8s.Update(ctx, cm)
		},
		"remove the owner reference": func(cm *corev1.ConfigMap) error {
			cm.OwnerReferences = nil
			return k8s.Update(ctx, cm)
		},
	}
	for _, name := range slices.Sorted(mapsKeys(vandalism)) {
		for _, key := range []client.ObjectKey{shard, index} {
			t.Run(name+" of "+key.Name, func(t *testing.T) {
				var cm corev1.ConfigMap
				if err := k8s.Get(ctx, key, &cm); err != nil {
					t.Fatal(err)
				}
				if cm.BinaryData == nil {
					cm.BinaryData = map[string][]byte{}
				}
				if err := vandalism[name](&cm); err != nil {
					t.Fatal(err)
				}
				testutil.Eventually(t, settle, "the ConfigMaps are restored", func() error {
					return samePublication(t, got, key, want)
				})
			})
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// samePublication checks that the ConfigMaps on the server hold exactly the
// encoded plans (no key more, none less, no byte changed) and that the
// vandalised one is back under its PDPair's control, label and all.
func samePublication(t *testing.T, p *pdv1.PDPair, key client.ObjectKey, want []planstore.Object) error {
	var cm corev1.ConfigMap
	if err := k8s.Get(context.Background(), key, &cm); err != nil {
		return err
	}
	if !metav1.IsControlledBy(&cm, p) || cm.Labels[pdv1.LabelPDPair] != p.Name {
		return fmt.Errorf("%s: owner %v labels %v", key.Name, metav1.GetControllerOf(&cm), cm.Labels)
	}
	cms := planConfigMaps(t, p)
	if len(cms) != len(want) {
		return fmt.Errorf("ConfigMaps %v, want %d", configMapNames(cms), len(want))
	}
	for _, w := range want {
		i := slices.IndexFunc(cms, func(cm corev1.ConfigMap) bool { return cm.Name == w.Name })
		if i < 0 || !sameStrings(cms[i].Data, w.Data) || !sameBytes(cms[i].BinaryData, w.BinaryData) {
			return fmt.Errorf("%s does not hold the encoded plans", w.Name)
		}
	}
	return nil
}

// encodedPlans is what the PDPair's ConfigMaps must hold.
func encodedPlans(t *testing.T, p *pdv1.PDPair) []planstore.Object {
	t.Helper()
	set, err := planv1.Plan(mustLayout(t, p))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := planstore.Encode(p.Name, set)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// A spec change republishes: new plans, new hash, and shards the new plans
// do not need are deleted. Starts from 1024 decode ranks, which need several
// shards, each under the API server's 1 MiB limit.
func TestLargeLayoutPublishesThenShrinks(t *testing.T) {
	t.Parallel() // slow and independent: overlaps with the other slow tests
	ns := newNamespace(t)
	// Prefill TP512 → decode TP1024, 200 layers: every decode rank takes half
	// of a prefill rank's heads, 400 fragments per rank, 409 600 in all.
	p := fixtures.Pair(ns, "wide").Prefill(512, 1).Decode(1024, 1).KVPair(200, 128, 256, 64).Obj()
	create(t, p)
	got := waitObservedWithin(t, p, 2*time.Minute)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	cms := planConfigMaps(t, got)
	if len(cms) < 3 {
		t.Fatalf("%d ConfigMaps for 1024 ranks; expected several shards", len(cms))
	}
	largest := 0
	for _, cm := range cms {
		b, _ := json.Marshal(cm)
		largest = max(largest, len(b))
		if len(b) > planstore.ObjectSizeLimit {
			t.Errorf("%s is %d bytes as JSON, over the 1 MiB limit", cm.Name, len(b))
		}
	}
	t.Logf("1024 decode ranks: %d ConfigMaps, largest %d bytes as JSON (limit %d)", len(cms), largest, planstore.ObjectSizeLimit)
	if published, _ := json.Marshal(publishedSet(t, got)); !bytes.Equal(published, plannedJSON(t, got)) {
		t.Fatal("the published 1024-rank plans differ from the planner's")
	}

	oldHash := got.Status.Plan.Hash
	got = updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec = fixtures.Pair(ns, "wide").Spec(fixtures.Llama70B(8, 4)).Obj().Spec })
	got = waitObserved(t, got)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	if got.Status.Plan.Hash == oldHash {
		t.Fatalf("after the update: hash %s (was %s)", got.Status.Plan.Hash, oldHash)
	}
	// The 1024-rank generation stays published through its grace
	// (status.generations); past it, with nothing using it, its shards go.
	// The requeue at the grace's end is in real time: a pod appearing
	// reconciles the pair now. (The parallel tests judge no generation in
	// its grace, so moving the clock leaves them be.)
	testClock.advance(GenerationGrace + lastUsedStep)
	defer testClock.advance(-(GenerationGrace + lastUsedStep))
	runPod(t, fixtures.DecodePod(ns, "wide-0", "wide").Obj(), fixtures.RunningStatus(true))
	testutil.Eventually(t, settle, "stale shards deleted", func() error {
		if names := configMapNames(planConfigMaps(t, got)); !slices.Equal(names, []string{"wide-plans", "wide-plans-0"}) {
			return fmt.Errorf("ConfigMaps %v", names)
		}
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(got), got); err != nil {
			return err
		}
		if len(got.Status.Plan.ConfigMaps) != 2 {
			return fmt.Errorf("status.plan.configMaps %v", got.Status.Plan.ConfigMaps)
		}
		return nil
	})
	if published, _ := json.Marshal(publishedSet(t, got)); !bytes.Equal(published, plannedJSON(t, got)) {
		t.Fatal("the republished plans differ from the planner's")
	}
}

func waitObservedWithin(t *testing.T, p *pdv1.PDPair, timeout time.Duration) *pdv1.PDPair {
	t.Helper()
	var got pdv1.PDPair
	testutil.Eventually(t, timeout, p.Name+" observed", func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		if got.Status.ObservedGeneration != got.Generation {
			return fmt.Errorf("observed %d of %d", got.Status.ObservedGeneration, got.Generation)
		}
		return nil
	})
	return &got
}

// A spec that becomes incompatible withdraws the published plans and says
// so; fixing it publishes again. Each change of compatibility is an event.
func TestIncompatibleSpecWithdrawsPlans(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "flip").Spec(fixtures.Llama70B(8, 4)).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)

	good := got.Spec.DeepCopy()
	got = updateSpec(t, got, func(p *pdv1.PDPair) {
		p.Spec.KVBuffers[0].PrefillUnitBytes = ptrTo[int64](128) // FP8 prefill, bf16 decode
		p.Spec.KVBuffers[0].PrefillItemBytes = ptrTo[int64](128)
	})
	got = waitObserved(t, got)
	wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionFalse, pdv1.ReasonUnitSizeMismatch)
	c := wantCondition(t, got, pdv1.PDPairPlansPublished, metav1.ConditionFalse, pdv1.ReasonLayoutIncompatible)
	if got.Status.Plan != nil {
		t.Fatalf("status.plan still describes withdrawn plans: %+v", got.Status.Plan)
	}
	testutil.Eventually(t, settle, "plans withdrawn", func() error {
		if n := len(planConfigMaps(t, got)); n != 0 {
			return fmt.Errorf("%d plan ConfigMaps remain", n)
		}
		return nil
	})
	t.Logf("PlansPublished: %s", c.Message)
	wantEvent(t, got, corev1.EventTypeWarning, pdv1.ReasonUnitSizeMismatch)

	got = updateSpec(t, got, func(p *pdv1.PDPair) { p.Spec = *good })
	got = waitObserved(t, got)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	if n := len(planConfigMaps(t, got)); n != 2 {
		t.Fatalf("%d plan ConfigMaps after the fix, want 2", n)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Every sample has as many targets on each decode rank; this layout has
// not, so the summary's minimum and maximum differ: 6 KV heads, 3 per
// prefill rank (TP2) and 2 per decode rank (TP3). Decode rank 0 takes heads
// 0-1 from prefill rank 0, rank 1 heads 2 (prefill 0) and 3 (prefill 1),
// rank 2 heads 4-5 from prefill rank 1: targets 1, 2, 1; each prefill rank
// serves two decode ranks; 4 fragments per buffer, 2 buffers.
func TestStatusSummaryOfUnevenTargets(t *testing.T) {
	ns := newNamespace(t)
	p := fixtures.Pair(ns, "uneven").Prefill(2, 1).Decode(3, 1).KVPair(1, 256, 384, 128).Obj()
	create(t, p)
	got := waitObserved(t, p)
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	wantSummary(t, got, pdv1.PlanSummary{
		Kind: "fragmented", DecodeTPRanks: 3, MinTargetsPerDecodeRank: 1, MaxTargetsPerDecodeRank: 2,
		PrefillFanOut: []int32{2, 2}, MaxPrefillFanOut: 2, FragmentCount: 8,
		FragmentsPerPage: 1, PageCost: "1 fragment per page for each buffer a decode rank pulls from a prefill rank: pages hold one token",
	}, plannedJSON(t, got))
}

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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// apiPair is a PDPair on a real API server whose plan ConfigMaps a test
// writes and whose status it points at an index, as the operator does.
type apiPair struct {
	t     *testing.T
	ctx   context.Context
	admin kubernetes.Interface
	dyn   dynamic.Interface
	pairs client.Client
	pair  *pdv1.PDPair
}

func startAPIPair(t *testing.T) *apiPair {
	env := testutil.StartForTest(t)
	ctx := context.Background()
	a := &apiPair{t: t, ctx: ctx}
	var err error
	if a.admin, err = kubernetes.NewForConfig(env.Config); err != nil {
		t.Fatal(err)
	}
	if a.dyn, err = dynamic.NewForConfig(env.Config); err != nil {
		t.Fatal(err)
	}
	if a.pairs, err = client.New(env.Config, client.Options{Scheme: env.Scheme}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "llm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a.pair = fixtures.GQAPair("llm", "pair", 8, 4, 4, 512)
	if err := a.pairs.Create(ctx, a.pair); err != nil {
		t.Fatal(err)
	}
	return a
}

// write creates or replaces the ConfigMaps of objects.
func (a *apiPair) write(objects []planstore.Object) {
	a.t.Helper()
	cms := a.admin.CoreV1().ConfigMaps("llm")
	for _, o := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: "llm", Labels: map[string]string{pdv1.LabelPDPair: "pair"}}, Data: o.Data, BinaryData: o.BinaryData}
		if _, err := cms.Update(a.ctx, cm, metav1.UpdateOptions{}); err != nil {
			if _, err := cms.Create(a.ctx, cm, metav1.CreateOptions{}); err != nil {
				a.t.Fatal(err)
			}
		}
	}
}

// name points the status at the index.json of index (status.plan.hash and
// indexSHA256), as the operator publishes it.
func (a *apiPair) name(index planstore.Object) {
	a.t.Helper()
	raw := index.Data[planstore.IndexKey]
	var idx planstore.Index
	if err := json.Unmarshal([]byte(raw), &idx); err != nil {
		a.t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(raw))
	before := a.pair.DeepCopy()
	a.pair.Status.ObservedGeneration = a.pair.Generation
	a.pair.Status.Plan = &pdv1.PlanSummary{Kind: "fragmented", DecodeTPRanks: 4, Hash: idx.PlanHash, IndexSHA256: hex.EncodeToString(sum[:])}
	if err := a.pairs.Status().Patch(a.ctx, a.pair, client.MergeFrom(before)); err != nil {
		a.t.Fatal(err)
	}
}

// The --pdpair source loads every plan set of a publication, as the plan
// directory does: filtered by the pod's decode layout, plansets.json bound
// by plansets.sig in signed mode (by its first set being the status's
// current one otherwise), and the current set alone, through the index the
// status names, when the sets index is absent or not to be trusted.
func TestAPISourceLoadsEverySet(t *testing.T) {
	a := startAPIPair(t)
	uid := string(a.pair.UID)
	keys, err := planstore.ParsePublicKeys(planstore.EncodePublicKey(testSigner.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	p4, p8 := fixtures.MHA(4, 4, fixtures.Buffers(2, 256, 256, 128)), fixtures.MHA(8, 4, fixtures.Buffers(2, 128, 256, 128))
	p8d2 := fixtures.MHA(8, 2, fixtures.Buffers(2, 128, 512, 128))
	p2 := fixtures.MHA(2, 4, fixtures.Buffers(2, 512, 256, 128))
	objs, hashes := publishSetsFor(t, "llm", uid, 5, p4, p8, p8d2)
	other, otherHashes := publishSetsFor(t, "llm", uid, 5, p4, p2) // the same current set, another older one
	withoutSetsSig := withIndexData(objs, func(d map[string]string) { delete(d, planstore.SetsSignatureKey) })
	// other's sets index under objs' sets signature: a ConfigMap writer's
	// forgery only the signature tells from the operator's publication
	forged := withIndexData(other, func(d map[string]string) { d[planstore.SetsSignatureKey] = objs[0].Data[planstore.SetsSignatureKey] })
	notCurrent, _ := publishSetsFor(t, "llm", uid, 5, p8, p4)
	// plansets.json whose first set claims another plan hash than the
	// status's (every rank still matching its entry)
	swapped := withIndexData(objs, func(d map[string]string) {
		d[planstore.SetsKey] = strings.Replace(d[planstore.SetsKey], `"planHash":"`+hashes[0]+`"`, `"planHash":"`+strings.Repeat("ab", 32)+`"`, 1)
	})
	if swapped[0].Data[planstore.SetsKey] == objs[0].Data[planstore.SetsKey] {
		t.Fatal("the sets index has no current plan hash to replace")
	}
	oneSet := withIndexData(objs, func(d map[string]string) { delete(d, planstore.SetsKey); delete(d, planstore.SetsSignatureKey) })
	malformed := withIndexData(objs, func(d map[string]string) { d[planstore.SetsKey] = "{" + d[planstore.SetsKey] })
	otherBytes := withIndexData(objs, func(d map[string]string) { d[planstore.IndexKey] += "\n" })
	d2, d8 := transferplan.Parallelism{TPSize: 2, DPSize: 1}, transferplan.Parallelism{TPSize: 8, DPSize: 1}
	cases := []struct {
		name   string
		objs   []planstore.Object
		status planstore.Object // the index the status names; objs[0] when zero
		signed bool
		decode *transferplan.Parallelism
		want   []string // Ranks' hash, then each alternate's
		reason planstore.Reason
		// setsRefused is why plansets.json was not loaded, with the
		// current set loaded anyway ("" when every set loaded)
		setsRefused planstore.Reason
	}{
		{name: "two sets of the current decode layout", objs: objs, want: hashes[:2]},
		{name: "two sets, signed", objs: objs, signed: true, want: hashes[:2]},
		{name: "one set: no plansets.json, nothing refused", objs: oneSet, signed: true, want: hashes[:1]},
		{name: "admitted under decode TP 2", objs: objs, decode: &d2, want: hashes[2:]},
		{name: "admitted under decode TP 2, signed", objs: objs, decode: &d2, signed: true, want: hashes[2:]},
		{name: "admitted under a decode layout never published", objs: objs, decode: &d8, reason: planstore.ReasonDecodeLayoutNotPublished},
		{name: "unsigned: a sets index whose current set is another", objs: swapped, want: hashes[:1], setsRefused: planstore.ReasonSealMismatch},
		{name: "unsigned: a malformed sets index, the current set kept", objs: malformed, want: hashes[:1], setsRefused: planstore.ReasonMalformedIndex},
		{name: "unsigned: another sets index with the status's current set", objs: forged, want: otherHashes},
		{name: "signed: another sets index refused, the current set kept", objs: forged, signed: true, want: otherHashes[:1], setsRefused: planstore.ReasonSealMismatch},
		{name: "signed: no plansets.sig, the current set alone", objs: withoutSetsSig, signed: true, want: hashes[:1], setsRefused: planstore.ReasonMissingSignature},
		{name: "signed: no plansets.sig, admitted under decode TP 2", objs: withoutSetsSig, signed: true, decode: &d2, reason: planstore.ReasonDecodeLayoutNotPublished},
		{name: "the status names another index", objs: objs, status: notCurrent[0], reason: planstore.ReasonSealMismatch},
		{name: "the status names other index.json bytes of the same plan hash", objs: objs, status: otherBytes[0], reason: planstore.ReasonSealMismatch},
		{name: "the status names another index, signed", objs: objs, status: notCurrent[0], signed: true, reason: planstore.ReasonSealMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a.t = t
			a.write(tc.objs)
			status := tc.status
			if status.Name == "" {
				status = tc.objs[0]
			}
			a.name(status)
			src := &API{Client: a.admin, Dynamic: a.dyn, Namespace: "llm", PDPair: "pair", EngineRanks: []int{1}, DecodeLayout: tc.decode}
			if tc.signed {
				src.Signed = NewSigned(keys, "llm", "pair", 0)
			}
			p, err := src.Load(a.ctx)
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
			for _, alt := range p.Alternates {
				got = append(got, alt[0].Hash)
			}
			if !slices.Equal(got, tc.want) || p.Ranks[0].Hash != p.Hash || p.Ranks[0].Plan.DecodeTPRank != 1 {
				t.Fatalf("loaded sets %v (decode TP rank %d), want %v", got, p.Ranks[0].Plan.DecodeTPRank, tc.want)
			}
			var fe *planstore.FormatError
			switch {
			case tc.setsRefused == "" && p.SetsRefused != nil:
				t.Fatalf("every set loaded, yet SetsRefused says %v", p.SetsRefused)
			case tc.setsRefused != "" && (!errors.As(p.SetsRefused, &fe) || fe.Reason != tc.setsRefused):
				t.Fatalf("the sets index was not loaded; SetsRefused %v, want reason %s", p.SetsRefused, tc.setsRefused)
			}
		})
	}
	// an older set changing alone (index.json the same) is a new version
	t.Run("version", func(t *testing.T) {
		a.t = t
		if v1, v2 := a.versionOf(objs), a.versionOf(swapped); v1 == v2 {
			t.Fatalf("plansets.json changed, the version stayed %s", v1)
		}
	})
}

// versionOf is the API source's Version once objects are written and the
// status names their index.
func (a *apiPair) versionOf(objects []planstore.Object) string {
	a.t.Helper()
	a.write(objects)
	a.name(objects[0])
	v, err := (&API{Client: a.admin, Dynamic: a.dyn, Namespace: "llm", PDPair: "pair", EngineRanks: []int{1}}).Version(a.ctx)
	if err != nil {
		a.t.Fatal(err)
	}
	return v
}

// withIndexData is objects with the index ConfigMap's data edited.
func withIndexData(objects []planstore.Object, edit func(map[string]string)) []planstore.Object {
	out := slices.Clone(objects)
	out[0].Data = maps.Clone(objects[0].Data)
	edit(out[0].Data)
	return out
}

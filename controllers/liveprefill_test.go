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
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// sglangLivePair is a compatible SGLang pair (prefill TP 4 → decode TP 2,
// page 16, bfloat16) whose prefill is read live at addr.
func sglangLivePair(ns, name, addr string) *pdv1.PDPair {
	return enginePair(ns, name, sglangEngine).Edit(func(p *pdv1.PDPair) {
		p.Spec.Prefill.TokensPerPage, p.Spec.Decode.TokensPerPage = ptr.To[int32](16), ptr.To[int32](16)
		p.Spec.Prefill.BootstrapAddress = addr
	}).Obj()
}

// The running prefill as the spec describes it.
var specPrefill = prefillInfo{attnTP: 4, cp: 1, dp: 1, pp: 1, page: 16, dtype: "bfloat16"}

// waitLive waits until LivePrefillMatches has the status and reason and
// its message says every part of says, and returns the pair.
func waitLive(t *testing.T, p *pdv1.PDPair, status metav1.ConditionStatus, reason pdv1.PDPairConditionReason, says ...string) *pdv1.PDPair {
	t.Helper()
	var got pdv1.PDPair
	testutil.Eventually(t, settle, fmt.Sprintf("%s: LivePrefillMatches=%s/%s saying %q", p.Name, status, reason, says), func() error {
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLivePrefillMatches))
		if c == nil || c.Status != status || c.Reason != string(reason) || c.ObservedGeneration != got.Generation {
			return fmt.Errorf("condition %+v", c)
		}
		for _, s := range says {
			if !strings.Contains(c.Message, s) {
				return fmt.Errorf("%q does not say %q", c.Message, s)
			}
		}
		return nil
	})
	return &got
}

// A prefill whose ranks have not all registered (503) is not read: the
// verdict is the spec's and the pair Ready. Once it answers as the spec
// says, LivePrefillMatches is True and status.livePrefill holds what it
// reported. Each value that differs, one at a time, makes it False naming
// the value with both numbers and the fix, and the pair not Ready, while
// LayoutCompatible stays the spec's; back as the spec says, it matches
// again. A prefill that then goes keeps the last answer and says so.
func TestLivePrefillMatchesOrDiffers(t *testing.T) {
	ns := newNamespace(t)
	prefill := newSGLangPrefill(t, "")
	pair := sglangLivePair(ns, "live", prefill.Addr())
	create(t, pair)
	got := waitLive(t, pair, metav1.ConditionUnknown, pdv1.ReasonLivePrefillNotRead, "HTTPStatus: HTTP 503", "the verdict is the spec's alone")
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)

	prefill.set(specPrefill.answer())
	got = waitLive(t, pair, metav1.ConditionTrue, pdv1.ReasonLivePrefillMatches, "attention TP 4, DP 1, PP 1, CP 1, page size 16, kv_cache_dtype bfloat16")
	wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	want := pdv1.LivePrefillStatus{From: "http://" + prefill.Addr() + "/route?prefill_dp_rank=-1&prefill_cp_rank=-1&target_tp_rank=-1&target_pp_rank=-1",
		AttentionTensorParallelSize: 4, DataParallelSize: 1, PipelineParallelSize: 1, ContextParallelSize: 1, TokensPerPage: 16, KVCacheDtype: "bfloat16"}
	if l := got.Status.LivePrefill; l == nil || l.ObservedAt == nil {
		t.Fatalf("status.livePrefill %+v", l)
	}
	seen := *got.Status.LivePrefill
	seen.ObservedAt = nil
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("status.livePrefill\n%+v, want\n%+v", seen, want)
	}

	cases := []struct {
		name string
		edit func(*prefillInfo)
		diff pdv1.LivePrefillDifference
		says string
	}{
		{"page size", func(i *prefillInfo) { i.page = 64 }, pdv1.LivePrefillDifference{Field: "prefill.tokensPerPage", Name: "page_size", Spec: "16", Live: "64"},
			"page_size is 64 running, 16 in the spec (spec.prefill.tokensPerPage)"},
		{"dtype", func(i *prefillInfo) { i.dtype = "auto" }, pdv1.LivePrefillDifference{Field: "prefill.kvCacheDtype", Name: "kv_cache_dtype", Spec: "bfloat16", Live: "auto"},
			"Fix: set spec.prefill.kvCacheDtype: auto"},
		{"attention TP", func(i *prefillInfo) { i.attnTP = 8 }, pdv1.LivePrefillDifference{Field: "prefill.tensorParallelSize", Name: "attn_tp_size", Spec: "4", Live: "8"},
			"set spec.prefill.tensorParallelSize: 8"},
		{"DP", func(i *prefillInfo) { i.attnTP, i.dp = 2, 2 }, pdv1.LivePrefillDifference{Field: "prefill.tensorParallelSize", Name: "attn_tp_size", Spec: "4", Live: "2"},
			"set spec.prefill.dataParallelSize: 2"},
		{"PP", func(i *prefillInfo) { i.pp = 2 }, pdv1.LivePrefillDifference{Field: "prefill.pipelineParallelSize", Name: "pp_size", Spec: "1", Live: "2"},
			"pp_size is 2 running, 1 in the spec"},
		{"CP", func(i *prefillInfo) { i.cp = 2 }, pdv1.LivePrefillDifference{Name: "attn_cp_size", Spec: "1", Live: "2"},
			"the API has no field for it"},
	}
	for _, c := range cases {
		live := specPrefill
		c.edit(&live)
		prefill.set(live.answer())
		got = waitLive(t, pair, metav1.ConditionFalse, pdv1.ReasonLivePrefillDiffers, c.says, "LayoutCompatible judges the spec")
		if d := got.Status.LivePrefill.Differences; len(d) == 0 || d[0] != c.diff {
			t.Errorf("%s: differences %+v, want first %+v", c.name, d, c.diff)
		}
		wantCondition(t, got, pdv1.PDPairLayoutCompatible, metav1.ConditionTrue, pdv1.ReasonCompatible)
		ready := wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionFalse, pdv1.ReasonLivePrefillDiffers)
		if !strings.Contains(ready.Message, c.says) {
			t.Errorf("%s: Ready says %q", c.name, ready.Message)
		}
		wantCondition(t, got, pdv1.PDPairStalled, metav1.ConditionTrue, pdv1.ReasonLivePrefillDiffers)
		prefill.set(specPrefill.answer())
		got = waitLive(t, pair, metav1.ConditionTrue, pdv1.ReasonLivePrefillMatches)
		wantCondition(t, got, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
		if meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairStalled)) != nil {
			t.Errorf("%s: Stalled stays after the prefill matches again", c.name)
		}
	}

	testutil.Eventually(t, settle, "a Warning Event for each difference, Normal ones for matching again", func() error {
		var events eventsv1.EventList
		if err := k8s.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
			return err
		}
		warnings, normals := 0, 0
		for _, e := range events.Items {
			switch {
			case e.Reason == string(pdv1.ReasonLivePrefillDiffers) && e.Type == corev1.EventTypeWarning && strings.Contains(e.Note, "in the spec"):
				warnings++
			case e.Reason == string(pdv1.ReasonLivePrefillMatches) && e.Type == corev1.EventTypeNormal:
				normals++
			}
		}
		// Matches read within one second say the same words: the recorder
		// may count them as one series.
		if warnings != len(cases) || normals == 0 {
			return fmt.Errorf("%d Warning events, want %d; %d Normal ones", warnings, len(cases), normals)
		}
		return nil
	})

	prefill.srv.Close()
	got = waitLive(t, pair, metav1.ConditionTrue, pdv1.ReasonLivePrefillMatches, "the last read failed", "Unreachable")
	if got.Status.LivePrefill.TokensPerPage != 16 || !strings.Contains(got.Status.LivePrefill.Message, "Unreachable") {
		t.Errorf("status.livePrefill after the prefill went: %+v", got.Status.LivePrefill)
	}
}

// Pairs that name no bootstrap address, or whose engine's prefill tells
// nothing (vLLM), have no LivePrefillMatches; a pair that stops naming
// its address loses it and its read's connection.
func TestLivePrefillOnlyWhereTheEngineTells(t *testing.T) {
	ns := newNamespace(t)
	silent := fixtures.SilentListener(t)
	vllm := enginePair(ns, "vllm", vllmEngine).Edit(func(p *pdv1.PDPair) { p.Spec.Prefill.BootstrapAddress = silent.Addr() }).Obj()
	plain := enginePair(ns, "no-address", sglangEngine).Obj()
	moving := sglangLivePair(ns, "moving", silent.Addr())
	for _, p := range []*pdv1.PDPair{vllm, plain, moving} {
		create(t, p)
	}
	waitLive(t, moving, metav1.ConditionUnknown, pdv1.ReasonLivePrefillNotRead, "not read yet")
	testutil.Eventually(t, settle, "the silent prefill to be asked", func() error {
		if silent.Open() == 0 {
			return fmt.Errorf("no connection")
		}
		return nil
	})
	for _, p := range []*pdv1.PDPair{vllm, plain} {
		got := waitObserved(t, p)
		if c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLivePrefillMatches)); c != nil || got.Status.LivePrefill != nil {
			t.Errorf("%s: %+v, status.livePrefill %+v", p.Name, c, got.Status.LivePrefill)
		}
	}
	// Removed just after a read connected (the silent prefill holds it for
	// the 3 s timeout): the read is cancelled, its connection closed at
	// once.
	accepted := silent.Accepted()
	testutil.Eventually(t, settle, "a fresh read of the silent prefill", func() error {
		if silent.Accepted() == accepted {
			return fmt.Errorf("%d connections accepted", accepted)
		}
		return nil
	})
	testutil.Eventually(t, settle, "the address removed", func() error {
		var got pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(moving), &got); err != nil {
			return err
		}
		got.Spec.Prefill.BootstrapAddress = ""
		return k8s.Update(context.Background(), &got)
	})
	testutil.Eventually(t, staleConnBound, "the read's connection closed", func() error {
		if n := silent.Open(); n > 0 {
			return fmt.Errorf("%d connections open", n)
		}
		return nil
	})
	testutil.Eventually(t, settle, "the condition gone", func() error {
		got := waitObserved(t, moving)
		if c := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLivePrefillMatches)); c != nil || got.Status.LivePrefill != nil {
			return fmt.Errorf("%+v, status.livePrefill %+v", c, got.Status.LivePrefill)
		}
		return nil
	})
}

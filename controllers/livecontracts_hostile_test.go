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
	"net"
	"strings"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// The targets of issue 27, against the real API server and the manager the
// suite runs: a namespace pointing pairs at silent addresses, or editing
// one pair's address again and again, does not delay another namespace's
// read; a re-targeted read is cancelled (its connection closed); and no
// status says what a target sent or how it failed to answer.

const (
	hostilePairs    = 24
	victimReadBound = 5 * time.Second
	staleConnBound  = 1500 * time.Millisecond
)

// livePrefillPair is a pair whose prefill contract is read from addr.
func livePrefillPair(ns, name, addr string, v fixtures.ContractPair) *pdv1.PDPair {
	p := contractPair(ns, name, nil, inline(string(v.DecodeContract)))
	p.Spec.Prefill.BootstrapAddress, p.Spec.Decode.TensorParallelSize = addr, 2
	return p
}

// victimRead creates a pair in its own namespace whose prefill answers at
// once and returns how long until its contract was read.
func victimRead(t *testing.T, v fixtures.ContractPair) time.Duration {
	t.Helper()
	ns := newNamespace(t)
	peer := contractPeer(t, v, false)
	pair := livePrefillPair(ns, "victim", peer.BootstrapAddr(), v)
	start := time.Now()
	create(t, pair)
	var read time.Duration
	testutil.Eventually(t, victimReadBound+settle, "the victim's contract read", func() error {
		var got pdv1.PDPair
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pair), &got); err != nil {
			return err
		}
		if got.Status.Contracts == nil || got.Status.Contracts.Prefill.SHA256 == "" {
			return fmt.Errorf("status.contracts %+v", got.Status.Contracts)
		}
		read = time.Since(start)
		return nil
	})
	return read
}

// A victim namespace's pair is read within 5 s while another namespace has
// 24 pairs at addresses that accept and never answer.
func TestLiveReadsFairWithSilentPairs(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	hostile := newNamespace(t)
	silent := fixtures.SilentListener(t)
	for i := range hostilePairs {
		create(t, livePrefillPair(hostile, fmt.Sprintf("silent-%d", i), silent.Addr(), v))
	}
	testutil.Eventually(t, settle, "the hostile reads to hold connections", func() error {
		if silent.Open() < liveReadSlots-liveReadSlots/4 {
			return fmt.Errorf("%d open", silent.Open())
		}
		return nil
	})
	if n := silent.Open(); n > liveReadSlots-liveReadSlots/4 {
		t.Errorf("one namespace holds %d read slots of %d", n, liveReadSlots)
	}
	d := victimRead(t, v)
	t.Logf("victim read after %s beside %d silent pairs (%d connections held)", d.Round(time.Millisecond), hostilePairs, silent.Open())
	if d > victimReadBound {
		t.Errorf("the victim's read took %s, bound %s", d, victimReadBound)
	}
}

// One hostile pair's address edited 24 times: every edit cancels the read
// of the address before, so a victim is read within 5 s and, 1.5 s after
// the last edit, no connection to an earlier address is open.
func TestReTargetedReadsAreCancelled(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	hostile := newNamespace(t)
	targets := make([]*fixtures.Listener, hostilePairs)
	for i := range targets {
		targets[i] = fixtures.SilentListener(t)
	}
	pair := livePrefillPair(hostile, "moving", targets[0].Addr(), v)
	create(t, pair)
	victim := make(chan time.Duration, 1)
	go func() { victim <- victimRead(t, v) }()
	for _, l := range targets[1:] {
		testutil.Eventually(t, settle, "the read of the current address", func() error {
			var got pdv1.PDPair
			if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(pair), &got); err != nil {
				return err
			}
			got.Spec.Prefill.BootstrapAddress = l.Addr()
			return k8s.Update(context.Background(), &got)
		})
		time.Sleep(50 * time.Millisecond)
	}
	last := time.Now()
	time.Sleep(staleConnBound)
	stale, accepted := 0, 0
	for _, l := range targets[:len(targets)-1] {
		stale += l.Open()
		accepted += l.Accepted()
	}
	t.Logf("%d edits: %d connections accepted at earlier addresses, %d still open %s after the last edit", hostilePairs-1, accepted, stale, time.Since(last).Round(time.Millisecond))
	if stale > 0 {
		t.Errorf("%d connections to earlier addresses are open %s after the last edit", stale, staleConnBound)
	}
	if d := <-victim; d > victimReadBound {
		t.Errorf("the victim's read took %s beside a pair edited %d times, bound %s", d, hostilePairs, victimReadBound)
	} else {
		t.Logf("victim read after %s beside a pair edited %d times", d.Round(time.Millisecond), hostilePairs)
	}
	if err := k8s.Delete(context.Background(), pair); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, settle, "the deleted pair's read to end", func() error {
		if n := targets[len(targets)-1].Open(); n > 0 {
			return fmt.Errorf("%d connections open", n)
		}
		return nil
	})
}

// A target that greets with 3,000 bytes of a non-HTTP banner, a port that
// refuses, a name that does not resolve and a listener that never answers
// all read alike: Unreachable, in the manager's words, quoting nothing of
// what the target sent, in conditions and Events alike.
func TestStatusQuotesNothingATargetSent(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	ns := newNamespace(t)
	var banner strings.Builder
	for i := 0; banner.Len() < 3000; i++ {
		fmt.Fprintf(&banner, "SSH-2.0-hostile-%04d ", i)
	}
	refused := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		_ = l.Close()
		return addr
	}()
	addrs := map[string]string{
		"banner":  fixtures.BannerListener(t, []byte(banner.String())).Addr(),
		"refused": refused,
		"dns":     "missing.llm.svc.cluster.invalid:8998", // an allowed Service name (suite_test.go) that does not resolve
		"silent":  fixtures.SilentListener(t).Addr(),
	}
	messages := map[string]string{}
	for name, addr := range addrs {
		create(t, livePrefillPair(ns, name, addr, v))
	}
	for name, addr := range addrs {
		got := waitPair(t, &pdv1.PDPair{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, metav1.ConditionUnknown, pdv1.ReasonContractPending, "Unreachable")
		msg := meta.FindStatusCondition(got.Status.Conditions, string(pdv1.PDPairLayoutCompatible)).Message
		for _, c := range got.Status.Conditions {
			checkQuotes(t, name+" condition "+c.Type, c.Message, banner.String())
		}
		checkQuotes(t, name+" status.contracts", got.Status.Contracts.Prefill.Message, banner.String())
		messages[name] = strings.ReplaceAll(msg, addr, "ADDRESS")
		t.Logf("%s: %d bytes: %s", name, len(msg), msg)
	}
	for name, msg := range messages {
		if msg != messages["refused"] {
			t.Errorf("%s reads otherwise than a refused port:\n%s\n%s", name, msg, messages["refused"])
		}
	}
	// Nor when: a refused port is reported when the timeout would have
	// ended a silent one's read, not at once.
	timed := livePrefillPair(ns, "refused-timing", refused, v)
	start := time.Now()
	create(t, timed)
	waitPair(t, timed, metav1.ConditionUnknown, pdv1.ReasonContractPending, "Unreachable")
	if d := time.Since(start); d < livecontract.DefaultTimeout-500*time.Millisecond {
		t.Errorf("a refused port was reported after %s, before the %s timeout a silent one takes", d, livecontract.DefaultTimeout)
	} else {
		t.Logf("a refused port reported Unreachable after %s", d.Round(time.Millisecond))
	}
	var events eventsv1.EventList
	if err := k8s.List(context.Background(), &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		checkQuotes(t, "event "+e.Reason, e.Note, banner.String())
	}
}

// checkQuotes fails when msg holds more than 120 bytes of sent, or any of
// the banner's words.
func checkQuotes(t *testing.T, what, msg, sent string) {
	t.Helper()
	if n := longestCommon(msg, sent); n > maxQuotedBytes {
		t.Errorf("%s quotes %d bytes of what the target sent: %.200s", what, n, msg)
	}
	if strings.Contains(msg, "hostile-") || strings.Contains(msg, "malformed HTTP") || strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") {
		t.Errorf("%s says what the target sent or how it failed: %.300s", what, msg)
	}
}

// longestCommon is the length of the longest substring of a found in b.
func longestCommon(a, b string) int {
	best := 0
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			if a[i-1] == b[j-1] {
				cur[j] = prev[j-1] + 1
				best = max(best, cur[j])
			} else {
				cur[j] = 0
			}
		}
		prev, cur = cur, prev
	}
	return best
}

// A bootstrap address outside --bootstrap-address-allowlist (the suite
// allows loopback and the Services of namespace llm) is refused with
// BootstrapAddressNotAllowed, and nothing is sent to it.
func TestBootstrapAddressAllowlist(t *testing.T) {
	v := fixtures.LoadContractPair(t, "gqa-p4-d2")
	ns := newNamespace(t)
	for name, addr := range map[string]string{"ip": "192.0.2.7:8998", "service": "prefill.other.svc:8998"} {
		pair := livePrefillPair(ns, name, addr, v)
		create(t, pair)
		got := waitPair(t, pair, metav1.ConditionFalse, pdv1.ReasonBootstrapAddressNotAllowed, "--bootstrap-address-allowlist", addr)
		wantCondition(t, got, pdv1.PDPairStalled, metav1.ConditionTrue, pdv1.ReasonBootstrapAddressNotAllowed)
	}
	if _, err := livecontract.ParseAddressPolicy([]string{"not a cidr"}); err == nil {
		t.Error("an entry that is neither a CIDR nor NAMESPACE/NAME was accepted")
	}
}

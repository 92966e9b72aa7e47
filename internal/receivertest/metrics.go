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

package receivertest

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// WaitTimeout bounds every wait of this package: long enough for a loaded
// 2-core machine, short enough that a hang fails the test instead of the
// test binary's timeout.
const WaitTimeout = 10 * time.Second

// Request is a transfer request every layout of the fixtures accepts.
var Request = receiver.TransferRequest{KVIndices: []int64{3, 4, 5}, AuxIndex: 7}

// WaitStatus polls room on m until cond holds, failing the test after
// WaitTimeout.
func WaitStatus(tb testing.TB, m *receiver.Manager, room int64, cond func(receiver.TransferPoll) bool) receiver.RoomStatus {
	tb.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		st, err := m.Status(room)
		if err != nil {
			tb.Fatalf("status of room %d: %v", room, err)
		}
		if cond(st.Status) {
			return st
		}
		if time.Now().After(deadline) {
			tb.Fatalf("room %d still %s after %v", room, st.Status, WaitTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// OpenAndRequest opens room on m against bootstrapAddr and sends req once
// the room is bootstrapped.
func OpenAndRequest(tb testing.TB, m *receiver.Manager, bootstrapAddr string, room int64, req receiver.TransferRequest) {
	tb.Helper()
	if err := m.Open(bootstrapAddr, room); err != nil {
		tb.Fatalf("open room %d: %v", room, err)
	}
	st := WaitStatus(tb, m, room, func(p receiver.TransferPoll) bool { return p >= receiver.Bootstrapped || p == receiver.Failed })
	if st.Status == receiver.Failed {
		tb.Fatalf("room %d failed while bootstrapping: %v", room, st.Failure)
	}
	if err := m.Request(room, req); err != nil {
		tb.Fatalf("request room %d: %v", room, err)
	}
}

// Counter is the sum of the series of counter (or gauge) name in reg whose
// labels include every name/value pair of labels: with no labels, the total
// over all label values. A series that does not exist yet counts 0
// (counters with labels appear on their first increment).
func Counter(tb testing.TB, reg *prometheus.Registry, name string, labels ...string) float64 {
	tb.Helper()
	if len(labels)%2 != 0 {
		tb.Fatalf("labels %v are not name/value pairs", labels)
	}
	families, err := reg.Gather()
	if err != nil {
		tb.Fatalf("gathering metrics: %v", err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if hasLabels(m.GetLabel(), labels) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
	}
	return sum
}

func hasLabels(have []*dto.LabelPair, want []string) bool {
	for i := 0; i < len(want); i += 2 {
		found := false
		for _, l := range have {
			if l.GetName() == want[i] && l.GetValue() == want[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// WaitCounter waits until Counter reaches want (messages cross sockets
// asynchronously), failing the test after WaitTimeout.
func WaitCounter(tb testing.TB, reg *prometheus.Registry, want float64, name string, labels ...string) {
	tb.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		got := Counter(tb, reg, name, labels...)
		if got >= want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s%v is %v after %v, want %v", name, labels, got, WaitTimeout, want)
		}
		time.Sleep(time.Millisecond)
	}
}

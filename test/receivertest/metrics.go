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

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The agent's metrics the tests read.
const (
	MetricRooms                  = "pdtopo_receiver_rooms_total"
	MetricRoomFailures           = "pdtopo_receiver_room_failures_total"
	MetricStatusMessages         = "pdtopo_receiver_status_messages_total"
	MetricStatusMessagesRejected = "pdtopo_receiver_status_messages_rejected_total"
	MetricHeartbeatMisses        = "pdtopo_receiver_heartbeat_misses_total"
	MetricConnectionsLost        = "pdtopo_receiver_prefill_connections_lost_total"
)

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

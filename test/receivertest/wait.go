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
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// WaitTimeout bounds every wait of this package: long enough for a loaded
// 2-core machine, short enough that a hang fails the test instead of the
// test binary's timeout.
const WaitTimeout = 10 * time.Second

// WaitStatus polls room on m until cond holds, failing the test after
// WaitTimeout.
func WaitStatus(tb testing.TB, m *receiver.Manager, room int64, cond func(receiver.TransferPoll) bool) receiver.RoomStatus {
	tb.Helper()
	var st receiver.RoomStatus
	testutil.Eventually(tb, WaitTimeout, fmt.Sprintf("room %d", room), func() error {
		var err error
		if st, err = m.Status(room); err != nil {
			tb.Fatalf("status of room %d: %v", room, err)
		}
		if cond(st.Status) {
			return nil
		}
		return fmt.Errorf("still %s", st.Status)
	})
	return st
}

// WaitCounter waits until Counter reaches want (messages cross sockets
// asynchronously), failing the test after WaitTimeout.
func WaitCounter(tb testing.TB, reg *prometheus.Registry, want float64, name string, labels ...string) {
	tb.Helper()
	testutil.Eventually(tb, WaitTimeout, fmt.Sprintf("%s%v", name, labels), func() error {
		if got := Counter(tb, reg, name, labels...); got < want {
			return fmt.Errorf("%v, want %v", got, want)
		}
		return nil
	})
}

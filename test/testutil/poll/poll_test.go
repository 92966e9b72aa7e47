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

package poll

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestUntilHolds(t *testing.T) {
	calls := 0
	err := Until(time.Second, func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls, want nil after 3", err, calls)
	}
}

func TestUntilTimesOutWithTheLastError(t *testing.T) {
	last := errors.New("the last one")
	start := time.Now()
	err := Until(30*time.Millisecond, func() error { return last })
	var te *TimeoutError
	if !errors.As(err, &te) || !errors.Is(err, last) || te.Timeout != 30*time.Millisecond {
		t.Fatalf("err %v, want a TimeoutError of 30ms wrapping %v", err, last)
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", took)
	}
}

func TestUntilChecksOnceWithoutTime(t *testing.T) {
	calls := 0
	if err := Until(0, func() error { calls++; return nil }); err != nil || calls != 1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestStopEndsAtOnce(t *testing.T) {
	final := errors.New("failed for good")
	calls := 0
	err := Until(time.Minute, func() error { calls++; return Stop(final) })
	if err != final || calls != 1 {
		t.Fatalf("err %v after %d calls, want %v after 1", err, calls, final)
	}
}

func TestEveryZeroNeverPauses(t *testing.T) {
	calls := 0
	start := time.Now()
	err := Until(time.Second, func() error {
		if calls++; calls < 1000 {
			return errors.New("not yet")
		}
		return nil
	}, Every(0))
	if err != nil || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("err %v, %d calls in %v", err, calls, time.Since(start))
	}
}

func TestContextEndsEarly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Until(time.Minute, func() error { return errors.New("not yet") }, Context(ctx))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

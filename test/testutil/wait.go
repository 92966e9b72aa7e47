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

package testutil

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// Eventually polls check until it returns nil, failing the test with what
// and check's last error once timeout has passed (or at once with an error
// check made with poll.Stop). It polls often at first (messages crossing
// loopback sockets land within a millisecond or two), then backs off to
// every 50ms (an API server's watch takes longer); opts change that
// (poll.Every, poll.Context). It is the tests' one polling helper: the loop
// is test/testutil/poll's, which tests of the packages this one imports call
// themselves.
func Eventually(tb testing.TB, timeout time.Duration, what string, check func() error, opts ...poll.Option) {
	tb.Helper()
	if err := poll.Until(timeout, check, opts...); err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}

// EventuallyValue is Eventually for a check that makes something: it
// returns what check returned with a nil error.
func EventuallyValue[T any](tb testing.TB, timeout time.Duration, what string, check func() (T, error), opts ...poll.Option) T {
	tb.Helper()
	var v T
	Eventually(tb, timeout, what, func() error {
		var err error
		v, err = check()
		return err
	}, opts...)
	return v
}

// EventuallyTrue is Eventually for a condition without an error to tell.
func EventuallyTrue(tb testing.TB, timeout time.Duration, what string, cond func() bool, opts ...poll.Option) {
	tb.Helper()
	Eventually(tb, timeout, what, func() error {
		if !cond() {
			return errors.New("not yet")
		}
		return nil
	}, opts...)
}

var namespaceSeq atomic.Int64

// NewNamespace creates a namespace named after the test.
func NewNamespace(t testing.TB, c client.Client) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", namespaceSeq.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	CreateNamespaces(t, c, name)
	return name
}

// WaitCondition waits until the pair's status describes its current
// generation with the condition of type condType at status, and returns it.
func WaitCondition(t testing.TB, c client.Client, timeout time.Duration, key client.ObjectKey, condType pdv1.PDPairConditionType, status metav1.ConditionStatus) *pdv1.PDPair {
	t.Helper()
	var pair pdv1.PDPair
	Eventually(t, timeout, fmt.Sprintf("PDPair %s %s=%s", key, condType, status), func() error {
		if err := c.Get(context.Background(), key, &pair); err != nil {
			return err
		}
		cond := meta.FindStatusCondition(pair.Status.Conditions, string(condType))
		switch {
		case pair.Status.ObservedGeneration != pair.Generation:
			return fmt.Errorf("observed generation %d of %d", pair.Status.ObservedGeneration, pair.Generation)
		case cond == nil:
			return fmt.Errorf("no %s condition", condType)
		case cond.Status != status:
			return fmt.Errorf("%s is %s (%s): %s", condType, cond.Status, cond.Reason, cond.Message)
		}
		return nil
	})
	return &pair
}

// WaitPair waits until ok accepts the pair as the server holds it, and
// returns it.
func WaitPair(t testing.TB, c client.Client, timeout time.Duration, key client.ObjectKey, ok func(*pdv1.PDPair) bool) *pdv1.PDPair {
	t.Helper()
	return EventuallyValue(t, timeout, fmt.Sprintf("PDPair %s as expected", key), func() (*pdv1.PDPair, error) {
		var pair pdv1.PDPair
		if err := c.Get(context.Background(), key, &pair); err != nil {
			return nil, err
		}
		if !ok(&pair) {
			return nil, fmt.Errorf("status %+v", pair.Status)
		}
		return &pair, nil
	})
}

// WaitPairs waits until every one of pairs has the condition of type
// condType at status with reason, for its current generation, and returns
// the time they all had. It reads the pairs every 100ms: a hundred GETs a
// round.
func WaitPairs(t testing.TB, c client.Client, timeout time.Duration, pairs []*pdv1.PDPair, condType pdv1.PDPairConditionType, status metav1.ConditionStatus, reason pdv1.PDPairConditionReason) time.Time {
	t.Helper()
	Eventually(t, timeout, fmt.Sprintf("%d PDPairs %s=%s/%s", len(pairs), condType, status, reason), func() error {
		for _, p := range pairs {
			var got pdv1.PDPair
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), &got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, string(condType))
			if cond == nil || cond.Status != status || cond.Reason != string(reason) || cond.ObservedGeneration != got.Generation {
				return fmt.Errorf("e.g. %s/%s: %+v", p.Namespace, p.Name, got.Status.Conditions)
			}
		}
		return nil
	}, poll.Every(100*time.Millisecond))
	return time.Now()
}

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

package decodepodtest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// Eventually polls check until it returns nil, or fails the test with the
// last error once timeout has passed.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var namespaceSeq atomic.Int64

// NewNamespace creates a namespace named after the test.
func NewNamespace(t testing.TB, c client.Client) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%s", namespaceSeq.Add(1), strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())))
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
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

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

package localcp

import (
	"context"
	"errors"
	"time"
)

// stopWaiting marks a check's error that ends waitUntil at once: a state
// the awaited one can no longer follow (a pair refused, not pending).
type stopWaiting struct{ err error }

func (s stopWaiting) Error() string { return s.err.Error() }

// waitUntil is run-local's one deadline loop: it calls check every pause
// until check returns nil (then nil), returns a stopWaiting error (then
// the error it wraps), timeout passes (then check's last error) or ctx
// ends (then ctx's error). check runs at least once.
func waitUntil(ctx context.Context, timeout, pause time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if stop, ok := errors.AsType[stopWaiting](err); ok {
			return stop.err
		}
		if time.Now().After(deadline) {
			return err
		}
		sleepCtx(ctx, pause)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

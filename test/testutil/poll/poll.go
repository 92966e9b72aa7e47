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

// Package poll is the tests' one polling loop: call a check until it holds
// or a timeout passes. It imports only the standard library, so that every
// test can use it, those inside the packages test/testutil itself imports
// (internal/controlplane) included; test/testutil's Eventually is this loop
// failing the test.
package poll

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// first and most are the default schedule's pauses: messages crossing
// loopback sockets land within a millisecond or two, an API server's watch
// takes longer, so the pause doubles from first up to most.
const (
	first = time.Millisecond
	most  = 50 * time.Millisecond
)

// Option changes how Until polls.
type Option func(*schedule)

type schedule struct {
	ctx   context.Context
	first time.Duration
	most  time.Duration
}

// Every pauses d between checks, always: for checks that cost (a kubectl
// run, a list of a hundred objects) or a pace a benchmark measures. Every(0)
// never pauses, for checks that wait themselves (a receive with a timeout).
func Every(d time.Duration) Option {
	return func(s *schedule) { s.first, s.most = d, d }
}

// Context ends the polling early, with the context's error, once ctx is
// done.
func Context(ctx context.Context) Option {
	return func(s *schedule) { s.ctx = ctx }
}

// TimeoutError is Until's answer when the check never held: how long it
// polled and the check's last error.
type TimeoutError struct {
	Timeout time.Duration
	Last    error
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("still not true after %s: %v", e.Timeout, e.Last)
}

func (e *TimeoutError) Unwrap() error { return e.Last }

// stopError is a check's error that ends the polling at once.
type stopError struct{ err error }

func (e stopError) Error() string { return e.err.Error() }
func (e stopError) Unwrap() error { return e.err }

// Stop makes a check's error final: Until returns err at once instead of
// polling on (a state the awaited one can no longer follow).
func Stop(err error) error { return stopError{err} }

// Until calls check until it returns nil, then returns nil. Once timeout
// has passed (check runs at least once) it returns a *TimeoutError with
// check's last error; an error made with Stop it returns at once, unwrapped.
func Until(timeout time.Duration, check func() error, opts ...Option) error {
	s := schedule{ctx: context.Background(), first: first, most: most}
	for _, o := range opts {
		o(&s)
	}
	deadline := time.Now().Add(timeout) // the tree's one deadline loop: every wait in the tests is this one
	for wait := s.first; ; wait = min(2*wait, s.most) {
		err := check()
		if err == nil {
			return nil
		}
		if stop, ok := errors.AsType[stopError](err); ok {
			return stop.err
		}
		if time.Now().After(deadline) {
			return &TimeoutError{Timeout: timeout, Last: err}
		}
		if wait == 0 {
			if s.ctx.Err() != nil {
				return s.ctx.Err()
			}
			continue
		}
		select {
		case <-s.ctx.Done():
			return fmt.Errorf("%w (last: %v)", s.ctx.Err(), err)
		case <-time.After(wait):
		}
	}
}

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

package v1

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// frames builds a multipart message from strings, for readable tables.
func frames(parts ...string) [][]byte {
	out := make([][]byte, len(parts))
	for i, p := range parts {
		out[i] = []byte(p)
	}
	return out
}

func le64(vs ...uint64) string { return string(kvwire.AppendU64s(nil, vs)) }

func lei64(vs ...int64) string { return string(kvwire.AppendI64s(nil, vs)) }

func equalFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// wantReason asserts err is an *Error with the given reason and frame.
func wantReason(t *testing.T, err error, reason kvwire.Reason, frame int) {
	t.Helper()
	var e *kvwire.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *kvwire.Error; want reason %s", err, err, reason)
	}
	if e.Reason != reason || e.Frame != frame {
		t.Fatalf("got reason %s frame %d (%v); want reason %s frame %d", e.Reason, e.Frame, err, reason, frame)
	}
}

// Fuzz inputs are one byte string; frames are separated by fuzzSep so that
// the mutator can add, drop and edit frames.
const fuzzSep = "\xff|\xff"

func joinFrames(fs [][]byte) []byte { return bytes.Join(fs, []byte(fuzzSep)) }

func splitFrames(data []byte) [][]byte { return bytes.Split(data, []byte(fuzzSep)) }

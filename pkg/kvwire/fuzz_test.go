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

package kvwire

import (
	"errors"
	"reflect"
	"testing"
)

func wantTypedError(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Reason == "" {
		t.Fatalf("untyped error %v (%T)", err, err)
	}
}

func FuzzDecodeStatus(f *testing.F) {
	g := newGen(13)
	for range 8 {
		s := g.status()
		f.Add(joinFrames(s.Frames()))
	}
	f.Add(joinFrames(frames("1", "5", "0")))
	f.Add(joinFrames(frames("1", "5", "0", "-1")))
	f.Add(joinFrames(frames("-9223372036854775808", "0", "2147483647", "9223372036854775807", "\x00\x00\x00")))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeStatus(splitFrames(data))
		if err != nil {
			wantTypedError(t, err)
			return
		}
		if !s.State.Valid() || s.PrefillTPRank < 0 || s.BootstrapToken < NoBootstrapToken {
			t.Fatalf("accepted out-of-range status %+v", s)
		}
		again, err := DecodeStatus(s.Frames())
		if err != nil || !reflect.DeepEqual(again, s) {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, s)
		}
	})
}

func FuzzDecodeRankAddress(f *testing.F) {
	f.Add([]byte(`{"rank_ip": "10.0.0.3", "rank_port": 41000}`))
	f.Add([]byte(`{"rank_ip": "", "rank_port": -1}`))
	f.Add([]byte(`Bootstrap info not Found`))
	f.Fuzz(func(t *testing.T, body []byte) {
		a, err := DecodeRankAddress(body)
		if err != nil {
			wantTypedError(t, err)
			return
		}
		again, err := DecodeRankAddress(a.MarshalPython())
		if err != nil || again != a {
			t.Fatalf("re-decode: %+v, %v; want %+v", again, err, a)
		}
	})
}

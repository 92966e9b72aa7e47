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
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

func TestRegistrationFramesGolden(t *testing.T) {
	g := Registration{
		DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "10.0.0.7:15500",
		KVPtrs: []uint64{0x7f0000001000, 0x7f0000002000}, StatePtrs: []uint64{0x10},
	}
	want := frames("None", "10.0.0.7", "17001", "10.0.0.7:15500",
		le64(0x7f0000001000, 0x7f0000002000), "", le64(0x10), "0")
	if got := g.Frames(); !equalFrames(got, want) {
		t.Fatalf("frames:\n got %q\nwant %q", got, want)
	}
	// No state buffers: the frame is present and empty, as struct.pack of no pointers.
	g.StatePtrs, g.DecodePrefixLen = nil, 12
	want[6], want[7] = []byte{}, []byte("12")
	if got := g.Frames(); !equalFrames(got, want) {
		t.Fatalf("frames without state:\n got %q\nwant %q", got, want)
	}
}

func TestDecodeRegistration(t *testing.T) {
	valid := func() [][]byte {
		return frames("None", "10.0.0.7", "17001", "h:1", le64(1, 2), "", le64(3), "0")
	}
	got, err := DecodeRegistration(valid())
	if err != nil {
		t.Fatal(err)
	}
	want := Registration{DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "h:1", KVPtrs: []uint64{1, 2}, StatePtrs: []uint64{3}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// An empty decode_prefix_len frame reads as 0, as in the reference.
	f := valid()
	f[7] = nil
	if g, err := DecodeRegistration(f); err != nil || g.DecodePrefixLen != 0 {
		t.Fatalf("empty prefix len: %+v, %v", g, err)
	}

	bad := []struct {
		name   string
		edit   func([][]byte) [][]byte
		reason kvwire.Reason
		frame  int
	}{
		{"seven legacy frames", func(f [][]byte) [][]byte { return f[:7] }, kvwire.ReasonFrameCount, -1},
		{"nine frames", func(f [][]byte) [][]byte { return append(f, nil) }, kvwire.ReasonFrameCount, -1},
		{"no frames", func([][]byte) [][]byte { return nil }, kvwire.ReasonFrameCount, -1},
		{"room is a number", func(f [][]byte) [][]byte { f[0] = []byte("5"); return f }, kvwire.ReasonNotRegistration, 0},
		{"ip not ascii", func(f [][]byte) [][]byte { f[1] = []byte("10.0.0.\xe9"); return f }, kvwire.ReasonNotASCII, 1},
		{"ip empty", func(f [][]byte) [][]byte { f[1] = nil; return f }, kvwire.ReasonInvalidValue, 1},
		{"ip v6", func(f [][]byte) [][]byte { f[1] = []byte("fe80::1"); return f }, kvwire.ReasonInvalidValue, 1},
		{"port not a number", func(f [][]byte) [][]byte { f[2] = []byte("http"); return f }, kvwire.ReasonNotAnInteger, 2},
		{"port zero", func(f [][]byte) [][]byte { f[2] = []byte("0"); return f }, kvwire.ReasonOutOfRange, 2},
		{"port too big", func(f [][]byte) [][]byte { f[2] = []byte("65536"); return f }, kvwire.ReasonOutOfRange, 2},
		{"session without port", func(f [][]byte) [][]byte { f[3] = []byte("host"); return f }, kvwire.ReasonInvalidValue, 3},
		{"session ipv6", func(f [][]byte) [][]byte { f[3] = []byte("[::1]:80"); return f }, kvwire.ReasonInvalidValue, 3},
		{"session port text", func(f [][]byte) [][]byte { f[3] = []byte("h:rpc"); return f }, kvwire.ReasonInvalidValue, 3},
		{"kv ptrs misaligned", func(f [][]byte) [][]byte { f[4] = f[4][:15]; return f }, kvwire.ReasonMisalignedArray, 4},
		{"aux ptrs present", func(f [][]byte) [][]byte { f[5] = []byte(le64(9)); return f }, kvwire.ReasonInvalidValue, 5},
		{"state ptrs misaligned", func(f [][]byte) [][]byte { f[6] = []byte("abc"); return f }, kvwire.ReasonMisalignedArray, 6},
		{"prefix len text", func(f [][]byte) [][]byte { f[7] = []byte("None"); return f }, kvwire.ReasonNotAnInteger, 7},
		{"prefix len negative", func(f [][]byte) [][]byte { f[7] = []byte("-3"); return f }, kvwire.ReasonOutOfRange, 7},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRegistration(c.edit(valid()))
			wantReason(t, err, c.reason, c.frame)
		})
	}
}

func TestRegistrationValidate(t *testing.T) {
	g := Registration{DecodeIP: "10.0.0.7", DecodeStatusPort: 17001, SessionID: "10.0.0.7:15500"}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	g.SessionID = "fe80::1:15500"
	wantReason(t, g.Validate(), kvwire.ReasonInvalidValue, 3)
	g.SessionID, g.DecodeStatusPort = "h:1", 70000
	wantReason(t, g.Validate(), kvwire.ReasonOutOfRange, 2)
}

func TestIsRegistration(t *testing.T) {
	if !kvwire.IsRegistration(frames("None", "x")) || kvwire.IsRegistration(frames("17")) || kvwire.IsRegistration(nil) {
		t.Fatal("IsRegistration misclassifies")
	}
}

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

package zmqsock

import (
	"bytes"
	"strings"
	"testing"
)

func zapFrames(mech string, creds ...[]byte) [][]byte {
	return append([][]byte{[]byte("1.0"), []byte("id7"), []byte("pdtopo-status"), []byte("10.0.0.3"), nil, []byte(mech)}, creds...)
}

func TestDecodeZAPRequest(t *testing.T) {
	key := bytes.Repeat([]byte{0xab}, 32)
	cases := []struct {
		name   string
		frames [][]byte
		want   string // "" = decodes
	}{
		{"CURVE with a key", zapFrames("CURVE", key), ""},
		{"NULL", zapFrames("NULL"), ""},
		{"too few frames", zapFrames("CURVE")[:5], "zap: a request has at least 6 frames, got 5"},
		{"other version", append([][]byte{[]byte("2.0")}, zapFrames("NULL")[1:]...), `zap: version "2.0", want "1.0"`},
		{"unknown mechanism", zapFrames("TLS"), `zap: unknown mechanism "TLS"`},
		{"CURVE without a key", zapFrames("CURVE"), "zap: a CURVE request carries one 32-byte public key, got 0 frames"},
		{"CURVE with a short key", zapFrames("CURVE", key[:31]), "zap: a CURVE request carries one 32-byte public key, got 1 frames"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := DecodeZAPRequest(c.frames)
			if c.want != "" {
				if err == nil || err.Error() != c.want {
					t.Fatalf("got %+v, %v; want %q", r, err, c.want)
				}
				return
			}
			if err != nil || string(r.RequestID) != "id7" || r.Domain != "pdtopo-status" || r.Address != "10.0.0.3" {
				t.Fatalf("got %+v, %v", r, err)
			}
		})
	}
	r, _ := DecodeZAPRequest(zapFrames("CURVE", key))
	// Z85 of 32 bytes of 0xab, from pyzmq's zmq.utils.z85.encode
	if got := r.CurveClientKey(); got != "Te&q4Te&q4Te&q4Te&q4Te&q4Te&q4Te&q4Te&q4" {
		t.Fatalf("client key %q", got)
	}
}

// FuzzDecodeZAPRequest: any frames decode or are refused, never panic; a
// decoded CURVE request has its key, and every reply echoes the request id
// in RFC 27's six frames.
func FuzzDecodeZAPRequest(f *testing.F) {
	f.Add([]byte("1.0|id|dom|1.2.3.4||CURVE|" + strings.Repeat("k", 32)))
	f.Add([]byte("1.0|id|dom|1.2.3.4||NULL"))
	f.Add([]byte("1.0||||"))
	f.Fuzz(func(t *testing.T, input []byte) {
		frames := bytes.Split(input, []byte("|"))
		r, err := DecodeZAPRequest(frames)
		if err != nil {
			return
		}
		if r.Mechanism == "CURVE" && len(r.CurveClientKey()) != 40 {
			t.Fatalf("CURVE request without a key: %q", input)
		}
		for _, ok := range []bool{true, false} {
			reply := r.reply(ok, "x")
			if len(reply) != 6 || !bytes.Equal(reply[1], r.RequestID) {
				t.Fatalf("reply %q to %q", reply, input)
			}
		}
	})
}

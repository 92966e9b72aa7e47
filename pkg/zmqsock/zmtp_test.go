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
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
)

func reader(b []byte, frames, size int) *messageReader {
	return &messageReader{r: bufio.NewReaderSize(bytes.NewReader(b), 16), maxFrames: frames, maxBytes: size}
}

func encode(frames ...[]byte) []byte {
	var b []byte
	for i, f := range frames {
		var flags byte
		if i < len(frames)-1 {
			flags = flagMore
		}
		b = appendFrame(b, flags, f)
	}
	return b
}

func TestMessageReader(t *testing.T) {
	long := bytes.Repeat([]byte{7}, 300)
	ping := command("PING", []byte{0, 10, 'c'})
	for _, c := range []struct {
		name       string
		wire       []byte
		wantFrames int
		wantErr    string // "" = a message
		oversize   bool
	}{
		{"one short frame", encode([]byte("hi")), 1, "", false},
		{"five frames, one long, one empty", encode([]byte("a"), nil, long, []byte("d"), []byte("e")), 5, "", false},
		{"a long frame of a short size", append([]byte{flagLong, 0, 0, 0, 0, 0, 0, 0, 2}, "ok"...), 1, "", false},
		{"a PING between messages is skipped", append(ping, encode([]byte("x"))...), 1, "", false},
		{"six frames", encode(nil, nil, nil, nil, nil, nil), 0, "a message of 6 frames", true},
		{"past the bytes", encode(long, long, long, long), 0, "a message of 4 frames and 1200 bytes", true},
		{"a frame claiming 2^63 bytes", []byte{flagLong, 0x80, 0, 0, 0, 0, 0, 0, 0}, 0, "at most 5 frames and 1024 bytes", true},
		{"reserved flag bits", []byte{0x08, 0}, 0, "reserved bits", false},
		{"a command inside a message", append(appendFrame(nil, flagMore, []byte("a")), ping...), 0, "a command inside a multipart message", false},
		{"a command with MORE", appendFrame(nil, flagCommand|flagMore, []byte("\x04PING\x00\x00")), 0, "a command with the MORE flag", false},
		{"a command without a name", appendFrame(nil, flagCommand, []byte{9, 'a'}), 0, "has no name", false},
		{"a huge command", []byte{flagCommand | flagLong, 0, 0, 0, 0, 0, 0, 0x10, 1}, 0, "a command of 4097 bytes", false},
		{"cut inside a frame", encode([]byte("hello"))[:4], 0, io.ErrUnexpectedEOF.Error(), false},
		{"cut between frames", appendFrame(nil, flagMore, []byte("a")), 0, io.ErrUnexpectedEOF.Error(), false},
		{"nothing", nil, 0, io.EOF.Error(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			frames, err := reader(c.wire, 5, 1024).next()
			if c.wantErr == "" {
				if err != nil || len(frames) != c.wantFrames {
					t.Fatalf("got %d frames, %v; want %d", len(frames), err, c.wantFrames)
				}
				return
			}
			var big *OversizeError
			if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.wantErr)) || errors.As(err, &big) != c.oversize {
				t.Fatalf("got %d frames, %v; want %q (oversize %v)", len(frames), err, c.wantErr, c.oversize)
			}
		})
	}
}

func TestGreetingAndReady(t *testing.T) {
	if err := checkGreeting(zmtpGreeting()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(readyCommand("PUSH")))
	flags, size, err := frameHeader(r)
	if err != nil || flags != flagCommand {
		t.Fatalf("READY header %#x %d %v", flags, size, err)
	}
	body, _ := readCommandBody(r, size)
	name, data, err := parseCommand(body)
	if err != nil || name != "READY" {
		t.Fatalf("%q %v", name, err)
	}
	props, err := parseProperties(data)
	if err != nil || props["Socket-Type"] != "PUSH" || len(props) != 1 {
		t.Fatalf("%v %v", props, err)
	}
	if _, err := parseProperties([]byte{3, 'a', 'b', 'c', 0, 0, 0, 9, 'x'}); err == nil {
		t.Fatal("a property longer than the command was read")
	}
}

// FuzzMessageReader: any bytes decode into messages within the limits or
// stop with an error, never panic, never allocate past the limits; what
// decodes encodes back to the same frames.
func FuzzMessageReader(f *testing.F) {
	f.Add(encode([]byte("a"), nil, []byte("ccc")))
	f.Add(append(command("PING", []byte{0, 1}), encode(bytes.Repeat([]byte{1}, 300))...))
	f.Add([]byte{flagLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add(encode(nil, nil, nil, nil, nil, nil))
	f.Fuzz(func(t *testing.T, wire []byte) {
		m := reader(wire, 5, 1024)
		for range 100 {
			frames, err := m.next()
			if err != nil {
				return
			}
			total := 0
			for _, fr := range frames {
				total += len(fr)
			}
			if len(frames) == 0 || len(frames) > 5 || total > 1024 {
				t.Fatalf("a message of %d frames and %d bytes passed limits of 5 and 1024", len(frames), total)
			}
			again, err := reader(encode(frames...), 5, 1024).next()
			if err != nil || len(again) != len(frames) {
				t.Fatalf("re-encoded: %d frames, %v", len(again), err)
			}
			for i := range frames {
				if !bytes.Equal(again[i], frames[i]) {
					t.Fatalf("frame %d changed in a round trip", i)
				}
			}
		}
	})
}

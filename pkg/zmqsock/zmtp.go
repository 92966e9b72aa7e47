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
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The ZMTP 3.x wire (rfc.zeromq.org/spec/23 and /37), as much of it as a
// PULL socket with the NULL mechanism needs: a 64-byte greeting each way,
// a READY command each way naming the socket types, then frames of a flags
// byte (MORE, LONG, COMMAND), a 1- or 8-byte size and the body. libzmq
// reads a whole multipart message before its receiver sees any of it, so a
// peer can make it buffer millions of frames; reading the wire here lets
// the agent refuse a message the moment it passes what a status can be.

const (
	zmtpGreetingLen = 64
	flagMore        = 0x01
	flagLong        = 0x02
	flagCommand     = 0x04
	// maxCommand bounds a command body (READY with a socket type and an
	// identity is a few dozen bytes; libzmq's metadata a few hundred).
	maxCommand = 4 << 10
)

// ZMTPError is a peer that broke the protocol or a limit; its connection
// is closed.
type ZMTPError struct{ Reason string }

func (e *ZMTPError) Error() string { return "zmtp: " + e.Reason }

func zmtpErrorf(format string, args ...any) error {
	return &ZMTPError{Reason: fmt.Sprintf(format, args...)}
}

// zmtpGreeting is this side's greeting: ZMTP 3.1, NULL, not as-server.
func zmtpGreeting() []byte {
	g := make([]byte, zmtpGreetingLen)
	g[0], g[9] = 0xFF, 0x7F
	g[10], g[11] = 3, 1
	copy(g[12:32], "NULL")
	return g
}

// checkGreeting accepts a ZMTP 3.x greeting with the NULL mechanism.
func checkGreeting(g []byte) error {
	switch {
	case len(g) != zmtpGreetingLen:
		return zmtpErrorf("a greeting is %d bytes, got %d", zmtpGreetingLen, len(g))
	case g[0] != 0xFF || g[9]&0x01 != 0x01:
		return zmtpErrorf("not a ZMTP greeting (signature % x)", g[:10])
	case g[10] < 3:
		return zmtpErrorf("ZMTP %d.%d; 3.0 or later is needed", g[10], g[11])
	}
	if mech := string(bytes.TrimRight(g[12:32], "\x00")); mech != "NULL" {
		return zmtpErrorf("mechanism %q; only NULL is served here (CURVE peers go to the libzmq socket)", mech)
	}
	return nil
}

// command encodes a command frame.
func command(name string, body []byte) []byte {
	b := append([]byte{byte(len(name))}, name...)
	b = append(b, body...)
	return appendFrame(nil, flagCommand, b)
}

// readyCommand is READY with one property, Socket-Type.
func readyCommand(socketType string) []byte {
	prop := []byte{byte(len("Socket-Type"))}
	prop = append(prop, "Socket-Type"...)
	prop = binary.BigEndian.AppendUint32(prop, uint32(len(socketType)))
	prop = append(prop, socketType...)
	return command("READY", prop)
}

// appendFrame encodes one frame with flags (MORE or COMMAND; LONG is
// chosen by size).
func appendFrame(dst []byte, flags byte, body []byte) []byte {
	if len(body) > 255 {
		dst = append(dst, flags|flagLong)
		dst = binary.BigEndian.AppendUint64(dst, uint64(len(body)))
	} else {
		dst = append(dst, flags, byte(len(body)))
	}
	return append(dst, body...)
}

// parseCommand splits a command body into its name and the rest.
func parseCommand(body []byte) (name string, data []byte, err error) {
	if len(body) < 1 || int(body[0]) > len(body)-1 {
		return "", nil, zmtpErrorf("a command of %d bytes has no name", len(body))
	}
	n := int(body[0])
	return string(body[1 : 1+n]), body[1+n:], nil
}

// parseProperties reads READY's name/value pairs.
func parseProperties(b []byte) (map[string]string, error) {
	props := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return nil, zmtpErrorf("a truncated property")
		}
		name := string(b[1 : 1+n])
		b = b[1+n:]
		v := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(v) > uint64(len(b)) {
			return nil, zmtpErrorf("property %q says %d bytes, %d remain", name, v, len(b))
		}
		props[name] = string(b[:v])
		b = b[v:]
	}
	return props, nil
}

// frameHeader reads a frame's flags and size.
func frameHeader(r *bufio.Reader) (flags byte, size uint64, err error) {
	if flags, err = r.ReadByte(); err != nil {
		return 0, 0, err
	}
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return 0, 0, zmtpErrorf("frame flags %#x has reserved bits set", flags)
	}
	if flags&flagLong == 0 {
		b, err := r.ReadByte()
		return flags, uint64(b), noEOF(err)
	}
	var long [8]byte
	if _, err := io.ReadFull(r, long[:]); err != nil {
		return 0, 0, noEOF(err)
	}
	return flags, binary.BigEndian.Uint64(long[:]), nil
}

// noEOF: a frame cut short is an unexpected end, not a clean one.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readCommandBody reads a command of size bytes (bounded by maxCommand).
func readCommandBody(r *bufio.Reader, size uint64) ([]byte, error) {
	if size > maxCommand {
		return nil, zmtpErrorf("a command of %d bytes (at most %d)", size, maxCommand)
	}
	body := make([]byte, size)
	_, err := io.ReadFull(r, body)
	return body, noEOF(err)
}

// messageReader reads whole messages of at most maxFrames frames and
// maxBytes bytes, refusing a larger one as soon as its frame headers say
// so: nothing past the limits is ever buffered.
type messageReader struct {
	r                   *bufio.Reader
	maxFrames, maxBytes int
	// onCommand answers a command between messages (PING); nil ignores them.
	onCommand func(name string, data []byte) error
	// started is called when the first frame of a message arrives.
	started func()
}

// next reads one message. It returns an *OversizeError for a message past
// the limits (its counts are what was seen when it was refused) and a
// *ZMTPError for a protocol violation; after either the connection is
// unusable.
func (m *messageReader) next() ([][]byte, error) {
	var frames [][]byte
	total := 0
	for {
		flags, size, err := frameHeader(m.r)
		if err != nil {
			if len(frames) > 0 {
				err = noEOF(err)
			}
			return nil, err
		}
		if flags&flagCommand != 0 {
			if len(frames) > 0 {
				return nil, zmtpErrorf("a command inside a multipart message")
			}
			if flags&flagMore != 0 {
				return nil, zmtpErrorf("a command with the MORE flag")
			}
			body, err := readCommandBody(m.r, size)
			if err != nil {
				return nil, err
			}
			name, data, err := parseCommand(body)
			if err != nil {
				return nil, err
			}
			if m.onCommand != nil {
				if err := m.onCommand(name, data); err != nil {
					return nil, err
				}
			}
			continue
		}
		if len(frames) == 0 && m.started != nil {
			m.started()
		}
		if len(frames) >= m.maxFrames || size > uint64(m.maxBytes-total) {
			return nil, &OversizeError{Frames: len(frames) + 1, Bytes: int(min(uint64(total)+size, uint64(1)<<62)), MaxFrames: m.maxFrames, MaxBytes: m.maxBytes}
		}
		body := make([]byte, size)
		if _, err := io.ReadFull(m.r, body); err != nil {
			return nil, noEOF(err)
		}
		frames = append(frames, body)
		total += int(size)
		if flags&flagMore == 0 {
			return frames, nil
		}
	}
}

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

package localapi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// CodeUpgradeRequired answers POST /v1/engine/stream without the upgrade
// to the stream protocol (or over HTTP/2, which has no upgrade).
const CodeUpgradeRequired = "UpgradeRequired"

// openStream is POST /v1/engine/stream: the body registers the engine (as
// PUT /v1/engine does), then the connection becomes the rank's event
// stream (101 Switching Protocols): the engine's operations in, its rooms'
// events out, one JSON object per line.
func (a *api) openStream(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor != 1 || !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", StreamProtocol) {
		w.Header().Set("Upgrade", StreamProtocol)
		w.Header().Set("Connection", "Upgrade")
		writeJSONError(w, http.StatusUpgradeRequired, CodeUpgradeRequired,
			"POST /v1/engine/stream upgrades an HTTP/1.1 connection: send Connection: Upgrade and Upgrade: "+StreamProtocol)
		return
	}
	info, err := parseEngine(r.Body)
	if err != nil {
		writeError(w, err)
		return
	}
	ew := newEventWriter(a.opts)
	s, reg, err := a.agent.OpenStream(info, ew)
	if err != nil {
		writeError(w, err)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		s.Close(receiver.ReasonStreamClosed, "the engine's connection could not be taken over for its stream: "+err.Error())
		writeJSONError(w, http.StatusInternalServerError, CodeInternalError, "the connection cannot be taken over: "+err.Error())
		return
	}
	a.streams.Add(1)
	defer a.streams.Done()
	defer conn.Close()
	conn.SetDeadline(time.Time{}) // the server's deadlines were for the request
	ew.conn = conn
	hello, _ := json.Marshal(Hello{Ev: EvHello, Protocol: 1, EngineRank: a.agent.EngineRank(), SessionID: reg.SessionID, Registration: reg.Generation, Replaced: reg.Replaced})
	head := "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + StreamProtocol + "\r\n\r\n"
	if err := ew.write(append([]byte(head), append(hello, '\n')...), a.opts.WriteTimeout); err != nil {
		s.Close(receiver.ReasonStreamClosed, "the engine's stream broke before its first event: "+err.Error())
		return
	}
	written := make(chan struct{})
	go func() { defer close(written); ew.run(s) }()
	readErr := serveOps(brw.Reader, s, ew)
	s.Close(endOf(ew.failure(), ew, readErr)) // nothing when the stream had ended
	<-written
}

// endOf says why a stream ended from the engine's side.
func endOf(writeErr error, ew *eventWriter, readErr error) (receiver.FailureReason, string) {
	var pe *protocolError
	switch {
	case errors.Is(writeErr, errStalled):
		return receiver.ReasonStreamStalled, ew.stalledMessage()
	case errors.As(readErr, &pe):
		return receiver.ReasonStreamProtocol, "the engine sent a line that is not a stream operation: " + pe.Error()
	case writeErr != nil:
		return receiver.ReasonStreamClosed, "the engine's stream broke: " + writeErr.Error()
	case errors.Is(readErr, io.EOF):
		return receiver.ReasonStreamClosed, "the engine closed its stream"
	}
	return receiver.ReasonStreamClosed, fmt.Sprintf("the engine's stream broke: %v", readErr)
}

// protocolError is a line that is not the protocol: the stream ends.
type protocolError struct{ err error }

func (e *protocolError) Error() string { return e.err.Error() }

// serveOps applies the engine's operations until the connection ends or a
// line is not the protocol; refusals of an operation go back as events.
func serveOps(br *bufio.Reader, s *receiver.Stream, ew *eventWriter) error {
	var long []byte
	for {
		line, err := readLine(br, &long)
		if err != nil {
			return err
		}
		op, err := DecodeOp(line)
		if err == nil {
			err = applyOp(s, op)
		}
		if err == nil {
			continue
		}
		var oe *OpError
		if errors.As(err, &oe) && oe.Room == nil {
			return &protocolError{oe} // the closed line says so
		}
		ew.line(func(b []byte) []byte {
			return AppendRefused(b, op.Op, op.Room, op.Ref, httpStatusOf(err), errorCodeOf(err), errorMessage(err))
		})
	}
}

// applyOp runs one operation of a stream.
func applyOp(s *receiver.Stream, op StreamOp) error {
	switch op.Op {
	case OpOpen:
		return s.Open(*op.BootstrapAddr, *op.Room, op.Ref)
	case OpRequest:
		if op.parsed != nil {
			return s.Request(*op.Room, op.Ref, *op.parsed)
		}
		req, err := parseRequestBytes(op.Request)
		if err != nil {
			return err
		}
		return s.Request(*op.Room, op.Ref, req)
	default:
		return s.Clear(*op.Room, op.Ref)
	}
}

// readLine reads one line without its newline, at most MaxStreamLine
// bytes. A short line is the reader's buffer (valid until the next read);
// a longer one is gathered in *long.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	*long = append((*long)[:0], line...)
	for {
		line, err = br.ReadSlice('\n')
		*long = append(*long, line...)
		if len(*long) > MaxStreamLine {
			return nil, &protocolError{fmt.Errorf("a line is longer than %d bytes", MaxStreamLine)}
		}
		switch {
		case err == nil:
			return (*long)[:len(*long)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return nil, err
		}
	}
}

// headerHas reports whether a comma-separated header lists token
// (case-insensitively).
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

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
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
)

// rawConn is a minimal HTTP/1.1 keep-alive client on one connection: the
// load an engine-side client with a persistent connection puts on the API,
// without net/http's transport goroutines (which, in-process, would take
// the CPU the agent is measured on).
type rawConn struct {
	c net.Conn
	r *bufio.Reader
	w *bufio.Writer
}

func dialRaw(network, addr string) (*rawConn, error) {
	c, err := net.Dial(network, addr)
	if err != nil {
		return nil, err
	}
	return &rawConn{c: c, r: bufio.NewReaderSize(c, 16<<10), w: bufio.NewWriterSize(c, 16<<10)}, nil
}

// do sends one request and returns the answer's status and body.
func (rc *rawConn) do(method, path string, body []byte) (int, []byte, error) {
	rc.send(method, path, body)
	return rc.receive()
}

// send buffers one request (HTTP/1.1 lets a client send the next before the
// answer to the previous: pipelining); receive flushes it and reports a
// failed write.
func (rc *rawConn) send(method, path string, body []byte) {
	w := rc.w
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(path)
	w.WriteString(" HTTP/1.1\r\nHost: agent\r\n")
	if body != nil {
		w.WriteString("Content-Type: application/json\r\nContent-Length: ")
		w.WriteString(strconv.Itoa(len(body)))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
}

// receive reads the next answer.
func (rc *rawConn) receive() (int, []byte, error) {
	if err := rc.w.Flush(); err != nil {
		return 0, nil, err
	}
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil {
		return 0, nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return 0, nil, err
	}
	if resp.Close {
		return 0, nil, fmt.Errorf("the server closed the connection")
	}
	return resp.StatusCode, raw, nil
}

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

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
)

// listen opens the local API listener. The API has no authentication: it
// is for the engine in the same pod, so only loopback addresses and unix
// sockets are accepted.
func listen(addr string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return listenUnix(path)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %q is neither HOST:PORT nor unix:PATH", addr)
	}
	if !isLoopback(host) {
		return nil, fmt.Errorf("--listen %q: the local API serves only loopback addresses (127.0.0.0/8, ::1, localhost) or unix:PATH; it has no authentication", addr)
	}
	return net.Listen("tcp", addr)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// listenUnix listens on a socket only the agent's own user can use.
func listenUnix(path string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("--listen unix: needs a path")
	}
	return listenUnixMode(path, 0o600)
}

// listenUnixMode removes a stale socket left by a previous run (never
// another kind of file) before listening, and sets the socket's mode.
func listenUnixMode(path string, mode fs.FileMode) (net.Listener, error) {
	if st, err := os.Lstat(path); err == nil {
		if st.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

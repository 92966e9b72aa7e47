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

package receivertest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// GatedAddress is a loopback address that forwards TCP connections to
// target only once release is called: until then a client's connections
// are accepted and wait, as to a bootstrap server that is slow to answer.
func GatedAddress(tb testing.TB, target string) (addr string, release func()) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	gate := make(chan struct{})
	var (
		once   sync.Once
		wg     sync.WaitGroup
		mu     sync.Mutex
		conns  []net.Conn
		closed bool
	)
	track := func(c net.Conn) {
		mu.Lock()
		defer mu.Unlock()
		if closed {
			c.Close()
		}
		conns = append(conns, c)
	}
	tb.Cleanup(func() {
		ln.Close()
		once.Do(func() { close(gate) })
		mu.Lock()
		closed = true
		for _, c := range conns { // kept-alive connections end with the test
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			track(c)
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				up, err := net.Dial("tcp", target)
				if err != nil {
					c.Close()
					return
				}
				track(up)
				go func() { _, _ = io.Copy(up, c); up.Close() }()
				_, _ = io.Copy(c, up)
				c.Close()
			}()
		}
	}()
	return ln.Addr().String(), func() { once.Do(func() { close(gate) }) }
}

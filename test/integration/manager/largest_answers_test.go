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

package manager

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pdtopo/pdtopo/internal/controlplane"
	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// largestAnswers are n bootstrap servers answering the largest
// parallel-info answers the limits admit: even ones a valid contract
// padded to plancontract.MaxBytes, odd ones a contract of that size the
// engine refuses. Each pair's contract is its own (its number is in it),
// but the servers share one answer template, so that the test process
// holds one answer, not n.
type largestAnswers struct {
	addrs                      []string
	valid                      int
	contractBytes, answerBytes int
}

func (a *largestAnswers) isValid(i int) bool { return i%2 == 0 }

// answerTemplate is an answer whose contract holds a fixed-width number at
// numberAt, to be replaced by the pair's.
type answerTemplate struct {
	body     []byte
	numberAt int
}

const numberWidth = 8

func startLargestAnswers(t *testing.T, n int, validContract []byte) *largestAnswers {
	t.Helper()
	bogus := []byte(`{"plan":{"prefix_granularity":16}}`)
	templates := [2]answerTemplate{largestAnswer(t, validContract), largestAnswer(t, bogus)}
	a := &largestAnswers{addrs: make([]string, n), contractBytes: plancontract.MaxBytes, answerBytes: len(templates[0].body)}
	for i := range a.addrs {
		tpl := templates[i%2]
		if a.isValid(i) {
			a.valid++
		}
		number := fmt.Sprintf("%0*d", numberWidth, i)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(tpl.body)))
			_, _ = w.Write(tpl.body[:tpl.numberAt])
			_, _ = w.Write([]byte(number))
			_, _ = w.Write(tpl.body[tpl.numberAt+numberWidth:])
		}))
		t.Cleanup(srv.Close)
		a.addrs[i] = srv.Listener.Addr().String()
	}
	return a
}

// largestAnswer pads contract (a JSON object) to plancontract.MaxBytes
// with an unknown top-level key whose value is escaped quotes, which the
// answer escapes again: the answer is as large as an answer may be.
func largestAnswer(t *testing.T, contract []byte) answerTemplate {
	t.Helper()
	head := string(bytes.TrimSuffix(bytes.TrimSpace(contract), []byte("}"))) + `,"pad` + strings.Repeat("0", numberWidth) + `":"`
	room := plancontract.MaxBytes - len(head) - len(`"}`)
	padded := head + strings.Repeat(`\"`, room/2) + strings.Repeat("x", room%2) + `"}`
	if len(padded) != plancontract.MaxBytes {
		t.Fatalf("padded contract is %d bytes, want %d", len(padded), plancontract.MaxBytes)
	}
	layout, err := json.Marshal(padded)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"prefill_tp_size":4,"prefill_dp_size":1,"cache_layout":` + string(layout) + `}`)
	if len(body) > kvcontract.MaxParallelInfoBytes {
		t.Fatalf("answer is %d bytes, past the limit %d", len(body), kvcontract.MaxParallelInfoBytes)
	}
	at := bytes.Index(body, []byte(`pad`+strings.Repeat("0", numberWidth))) + len("pad")
	return answerTemplate{body: body, numberAt: at}
}

// memorySample is the manager's Go heap in use, its RSS and the bytes of
// live contracts it keeps.
type memorySample struct{ heap, rss, kept uint64 }

// memorySampler reads the manager's metrics every second and keeps the
// peak of each figure.
type memorySampler struct {
	m    *controlplane.Process
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	peak memorySample
}

func sampleManagerMemory(t *testing.T, m *controlplane.Process) *memorySampler {
	s := &memorySampler{m: m, done: make(chan struct{})}
	s.wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
			got, err := readMemory(m)
			if err != nil {
				continue
			}
			s.mu.Lock()
			s.peak.heap, s.peak.rss, s.peak.kept = max(s.peak.heap, got.heap), max(s.peak.rss, got.rss), max(s.peak.kept, got.kept)
			s.mu.Unlock()
		}
	})
	t.Cleanup(func() {
		peak := s.stop()
		if t.Failed() { // the figures up to the failure
			t.Logf("manager peak heap %.1f MiB, RSS %.1f MiB, live contracts kept %d bytes", mib(peak.heap), mib(peak.rss), peak.kept)
		}
	})
	return s
}

func (s *memorySampler) now(t *testing.T) memorySample {
	t.Helper()
	got, err := readMemory(s.m)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// stop ends the sampling and returns the peaks.
func (s *memorySampler) stop() memorySample {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// readMemory reads go_memstats_heap_inuse_bytes,
// process_resident_memory_bytes and pdtopo_live_contract_bytes_kept from
// the manager's metrics.
func readMemory(m *controlplane.Process) (memorySample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.MetricsURL, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return memorySample{}, err
	}
	defer resp.Body.Close()
	var got memorySample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case "go_memstats_heap_inuse_bytes":
			got.heap = uint64(v)
		case "process_resident_memory_bytes":
			got.rss = uint64(v)
		case "pdtopo_live_contract_bytes_kept":
			got.kept = uint64(v)
		}
	}
	if got.heap == 0 || got.rss == 0 {
		return got, fmt.Errorf("no heap or RSS figure in %s", m.MetricsURL)
	}
	return got, nil
}

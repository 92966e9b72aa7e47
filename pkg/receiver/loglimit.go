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

package receiver

import (
	"sync"
	"time"
)

// logLimiter lets one log line per key through per second.
type logLimiter struct {
	mu   sync.Mutex
	last map[string]int64
}

func (l *logLimiter) allow(key string, now int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = make(map[string]int64)
	}
	if t, ok := l.last[key]; ok && now-t < int64(time.Second) {
		return false
	}
	l.last[key] = now // keys are a fixed set of reasons: the map stays small
	return true
}

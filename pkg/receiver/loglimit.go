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

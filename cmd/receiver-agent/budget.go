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
	"fmt"
	"log/slog"
	"runtime/debug"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pdtopo/pdtopo/internal/memlimit"
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// applyBudget sizes the agent to the memory it is given (--memory-limit, or
// its container's cgroup limit): it sets o.budget and lowers the Go memory
// limit to the budget's (never raising one GOMEMLIMIT set lower). restore
// puts the previous Go memory limit back.
func applyBudget(o *options, log *slog.Logger) (restore func(), err error) {
	limit, from, err := o.memoryLimitBytes()
	if err != nil {
		return nil, err
	}
	if o.budget, err = receiver.NewBudget(limit, o.rankCount); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	previous := debug.SetMemoryLimit(-1)
	restore = func() { debug.SetMemoryLimit(previous) }
	if g := o.budget.GoMemoryLimit; g > 0 && g < previous {
		debug.SetMemoryLimit(g)
	}
	log.Info("memory budget", "from", from, "budget", o.budget.String(), "goMemoryLimit", debug.SetMemoryLimit(-1), "maxRoomsPerRank", o.maxRoomsPerRank())
	return restore, nil
}

// memoryLimitBytes is --memory-limit, or the container's limit (0 when it
// has none), and where it came from.
func (o *options) memoryLimitBytes() (int64, string, error) {
	if o.memoryLimit != "" {
		q, err := resource.ParseQuantity(o.memoryLimit)
		if err != nil || q.Sign() <= 0 {
			return 0, "", fmt.Errorf("--memory-limit %q is not a positive byte count (e.g. 512Mi, 2Gi)", o.memoryLimit)
		}
		return q.Value(), "--memory-limit", nil
	}
	l, err := memlimit.Read()
	if err != nil {
		// no /proc or an unreadable cgroup: run with the defaults, say so
		return 0, "unknown (" + err.Error() + ")", nil
	}
	if l.Bytes == 0 {
		return 0, fmt.Sprintf("no cgroup v%d memory limit", l.Version), nil
	}
	return l.Bytes, l.File, nil
}

// maxRoomsPerRank is --max-rooms, or the budget's.
func (o *options) maxRoomsPerRank() int {
	if o.maxRooms > 0 {
		return o.maxRooms
	}
	return o.budget.MaxRoomsPerRank
}

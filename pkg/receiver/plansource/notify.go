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

package plansource

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// watchDir calls changed for every event in dir whose base name matches,
// until ctx ends. Watch errors (an overflowed queue) also call changed:
// an event may have been lost, and a re-read is cheap.
func watchDir(ctx context.Context, dir string, match func(base string) bool, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return fmt.Errorf("watching %s: %w", dir, err)
	}
	go func() {
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if match(filepath.Base(ev.Name)) {
					changed()
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				changed()
			}
		}
	}()
	return nil
}

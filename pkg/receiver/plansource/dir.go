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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// Dir is a directory where a PDPair's plan ConfigMaps (index and shards)
// are projected together, as the injected decode-pod sidecar mounts them.
type Dir struct {
	Path        string
	EngineRanks []int
}

func (d Dir) Describe() string { return "plan directory " + d.Path }

// Version follows the kubelet's atomic writer: the visible files are
// symlinks into "..data", a symlink swapped to a new timestamped directory
// on every update, so its target names the content. A plain directory
// (no "..data") is versioned by its index file's size and time.
func (d Dir) Version(context.Context) (string, error) {
	target, err := os.Readlink(filepath.Join(d.Path, "..data"))
	if err == nil {
		return "data:" + target, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	st, err := os.Stat(filepath.Join(d.Path, planstore.IndexKey))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("index:%d:%d", st.Size(), st.ModTime().UnixNano()), nil
}

func (d Dir) Load(context.Context) (Plans, error) {
	if err := checkRanks(d.EngineRanks); err != nil {
		return Plans{}, err
	}
	got, err := planstore.LoadEngineRanksFromDir(d.Path, d.EngineRanks)
	if err != nil {
		return Plans{}, err
	}
	return Plans{PDPair: got.PDPair, Hash: got.PlanHash, Ranks: snapshots(got.Layout, got.PlanHash, got.Plans)}, nil
}

// Notify watches the directory itself: the kubelet's update ends with the
// rename of "..data_tmp" over "..data", one event in this directory, and
// a plain directory's files are created, written or renamed here too.
func (d Dir) Notify(ctx context.Context, changed func()) error {
	return watchDir(ctx, d.Path, func(string) bool { return true }, changed)
}

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
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// maxPlanFile caps a plan file: the plans of 1024 decode ranks with
// hundreds of buffers fit well under it.
const maxPlanFile = 256 << 20

// File is a plan set written by `pdtopo plan -o json`.
type File struct {
	Path        string
	EngineRanks []int
}

func (f File) Describe() string { return "plan file " + f.Path }

// Version is the hash of the file's bytes.
func (f File) Version(context.Context) (string, error) {
	raw, err := readCapped(f.Path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

func (f File) Load(context.Context) (Plans, error) {
	if err := checkRanks(f.EngineRanks); err != nil {
		return Plans{}, err
	}
	raw, err := readCapped(f.Path)
	if err != nil {
		return Plans{}, err
	}
	set, err := DecodePlanSet(raw)
	if err != nil {
		return Plans{}, fmt.Errorf("%s: %w", f.Path, err)
	}
	out := Plans{Hash: set.Hash(), Ranks: make([]receiver.PlanSnapshot, 0, len(f.EngineRanks))}
	for _, r := range f.EngineRanks {
		snap, err := receiver.SnapshotFor(set, r)
		if err != nil {
			return Plans{}, fmt.Errorf("%s: %w", f.Path, err)
		}
		out.Ranks = append(out.Ranks, snap)
	}
	return out, nil
}

// Notify watches the file's directory: editors and deploy tools replace a
// file by renaming another over it, which a watch on the file would miss.
func (f File) Notify(ctx context.Context, changed func()) error {
	name := filepath.Base(f.Path)
	return watchDir(ctx, filepath.Dir(f.Path), func(base string) bool { return base == name }, changed)
}

// DecodePlanSet reads a plan set strictly: unknown fields are refused, so a
// file in another format is not taken for an empty plan.
func DecodePlanSet(raw []byte) (*transferplan.PlanSet, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var set transferplan.PlanSet
	if err := dec.Decode(&set); err != nil {
		return nil, fmt.Errorf("not a plan set (pdtopo plan -o json): %v", err)
	}
	if len(set.Plans) == 0 {
		return nil, fmt.Errorf("the plan set has no plans")
	}
	return &set, nil
}

func readCapped(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxPlanFile+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxPlanFile {
		return nil, fmt.Errorf("%s is longer than %d bytes", path, maxPlanFile)
	}
	return raw, nil
}

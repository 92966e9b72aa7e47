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

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
)

// ReadPair reads the manifest (a file, a directory or "-" for stdin) and
// picks the PDPair name (any when the manifest holds one); what it skips is
// noted on notes.
func ReadPair(file, name string, stdin io.Reader, notes io.Writer) (*pdv1.PDPair, error) {
	pairs, err := ReadPairs(file, stdin, notes)
	if err != nil {
		return nil, err
	}
	pair, err := manifest.Pick(pairs, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return pair, nil
}

// ReadPairs reads every PDPair of a file, of standard input ("-") or of the
// manifests in a directory (not recursive; kustomization files and files
// holding only comments are passed over). The input may hold other objects
// too, an application's Deployments and Services beside its PDPairs: they
// are skipped, and each file's skipped objects are named on notes.
func ReadPairs(file string, stdin io.Reader, notes io.Writer) ([]pdv1.PDPair, error) {
	if file == "-" {
		return readPairsFrom(file, stdin, notes)
	}
	info, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return readPairsFile(file, notes)
	}
	entries, err := os.ReadDir(file)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		base := strings.TrimSuffix(strings.ToLower(e.Name()), ext)
		if e.Type().IsRegular() && (ext == ".yaml" || ext == ".yml" || ext == ".json") && base != "kustomization" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var pairs []pdv1.PDPair
	for _, n := range names {
		got, err := readPairsFile(filepath.Join(file, n), notes)
		if errors.Is(err, manifest.ErrNoPDPair) {
			continue
		}
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, got...)
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("%s: no PDPair in its %d manifest file(s)", file, len(names))
	}
	return pairs, nil
}

func readPairsFile(path string, notes io.Writer) ([]pdv1.PDPair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readPairsFrom(path, f, notes)
}

// readPairsFrom reads the PDPairs of one stream named name, noting the
// objects of other kinds it skips.
func readPairsFrom(name string, r io.Reader, notes io.Writer) ([]pdv1.PDPair, error) {
	pairs, skipped, err := manifest.ReadPDPairsAmong(r)
	if len(skipped) > 0 {
		what := make([]string, len(skipped))
		for i, s := range skipped {
			what[i] = s.String()
		}
		fmt.Fprintf(notes, "skipped %s: %s (not PDPairs)\n", name, strings.Join(what, ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return pairs, nil
}

// ReadHFConfig reads --hf-config (nothing when it is not given), at most
// modelgeom.MaxConfigBytes and a byte more, so that a larger file is refused
// by its size.
func ReadHFConfig(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, UsageErrorf("--hf-config: %v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, modelgeom.MaxConfigBytes+1))
	if err != nil {
		return nil, UsageErrorf("--hf-config %s: %v", path, err)
	}
	if len(b) > modelgeom.MaxConfigBytes {
		size := int64(len(b))
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
		return nil, UsageErrorf("--hf-config %s: %s: config.json: the file is %d bytes; at most %d are read. Fix: give the model's own config.json (a few kilobytes), not weights or an index",
			path, modelgeom.ReasonInvalidModelConfig, size, modelgeom.MaxConfigBytes)
	}
	return b, nil
}

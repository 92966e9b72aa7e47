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

// Package announce is how a prefill instance started by hand tells `make
// run` (internal/localcp) where it serves: one small file per instance in
// a directory both know (bin/local-prefills), written by
// `prefill-peer --announce DIR` and removed when it exits. A file holds
// "key=value" lines:
//
//	bootstrap=127.0.0.1:40123   the instance's bootstrap address (required)
//	prefill=tp=8,dp=1           its layout (shown only)
//	decode=tp=4,dp=1            the decode layout its bytes are checked for:
//	                            only pods admitted under it get its rooms
//
// The file's name, less ".prefill", names the instance in the room counts.
package announce

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Suffix ends every announcement's file name.
const Suffix = ".prefill"

// Bounds on what a directory can make run-local hold: anyone who can write
// there can announce, so the count and each file's size are limited.
const (
	MaxInstances = 16
	MaxFileBytes = 1024
)

// Instance is one announced prefill instance.
type Instance struct {
	Name      string // the file's name less Suffix
	Bootstrap string // host:port on loopback
	Prefill   string // "tp=8,dp=1", or empty
	// Decode is the decode layout the instance's bytes are checked for
	// ("tp=4,dp=1"); empty: any.
	Decode string
}

var (
	nameRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	layoutRE = regexp.MustCompile(`^tp=[1-9][0-9]{0,3},dp=[1-9][0-9]{0,3}$`)
)

// Parse reads the announcement of the instance named name.
func Parse(name string, data []byte) (Instance, error) {
	in := Instance{Name: name}
	if !nameRE.MatchString(name) {
		return in, fmt.Errorf("announcement name %q: want 1-63 letters, digits, '.', '_' or '-'", name)
	}
	if len(data) > MaxFileBytes {
		return in, fmt.Errorf("announcement %s: %d bytes, at most %d", name, len(data), MaxFileBytes)
	}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return in, fmt.Errorf("announcement %s line %d: %q is not key=value", name, i+1, line)
		}
		switch k {
		case "bootstrap":
			ap, err := netip.ParseAddrPort(v)
			if err != nil || !ap.Addr().IsLoopback() || ap.Port() == 0 {
				return in, fmt.Errorf("announcement %s line %d: bootstrap %q: want a loopback IP:port, e.g. 127.0.0.1:8998", name, i+1, v)
			}
			in.Bootstrap = ap.String()
		case "prefill", "decode":
			if !layoutRE.MatchString(v) {
				return in, fmt.Errorf("announcement %s line %d: %s %q: want tp=N,dp=M", name, i+1, k, v)
			}
			if k == "prefill" {
				in.Prefill = v
			} else {
				in.Decode = v
			}
		default:
			return in, fmt.Errorf("announcement %s line %d: unknown key %q (want bootstrap, prefill or decode)", name, i+1, k)
		}
	}
	if in.Bootstrap == "" {
		return in, fmt.Errorf("announcement %s: no bootstrap=HOST:PORT line", name)
	}
	return in, nil
}

// Format is the file Parse reads back.
func (in Instance) Format() []byte {
	s := "bootstrap=" + in.Bootstrap + "\n"
	if in.Prefill != "" {
		s += "prefill=" + in.Prefill + "\n"
	}
	if in.Decode != "" {
		s += "decode=" + in.Decode + "\n"
	}
	return []byte(s)
}

// Write announces in into dir (made if missing) and returns the file's
// path; the caller removes it when the instance stops. The file appears
// whole (written aside, then renamed), so a reader never sees half of it.
func Write(dir string, in Instance) (string, error) {
	if _, err := Parse(in.Name, in.Format()); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, in.Name+Suffix)
	tmp := filepath.Join(dir, "."+in.Name+".tmp")
	if err := os.WriteFile(tmp, in.Format(), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// Read is every valid announcement in dir, by name, at most MaxInstances;
// the error names each file refused and why (too many included). A
// missing dir announces nothing.
func Read(dir string) ([]Instance, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Instance
	var errs []error
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), Suffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if len(out) == MaxInstances {
			errs = append(errs, fmt.Errorf("announcement %s ignored: at most %d prefill instances are driven", name, MaxInstances))
			continue
		}
		in, err := readOne(filepath.Join(dir, e.Name()), name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Instance) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

func readOne(path, name string) (Instance, error) {
	f, err := os.Open(path)
	if err != nil {
		return Instance{Name: name}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return Instance{Name: name}, fmt.Errorf("announcement %s: %w", name, err)
	}
	return Parse(name, data)
}

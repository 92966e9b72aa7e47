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

// Package memlimit reads the memory limit of the container a process runs
// in: the lowest memory limit of its cgroup and the cgroups above it that
// the process can see, under cgroup v2 (memory.max) or v1
// (memory.limit_in_bytes). The receiver agent sizes its Go memory limit and
// its queues from it.
package memlimit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
)

// Limit is a container's memory limit and where it was read.
type Limit struct {
	// Bytes is the limit; 0 when no cgroup on the path sets one.
	Bytes int64
	// File is the file that holds it ("" when Bytes is 0).
	File string
	// Version is the cgroup version read (1 or 2); 0 when the process is in
	// no memory cgroup.
	Version int
}

// unlimitedV1 is the smallest value cgroup v1 reports for "no limit": the
// kernel writes PAGE_COUNTER_MAX pages, about 2^63 bytes rounded to a page.
const unlimitedV1 = int64(1) << 62

// Read reads the limit of the calling process.
func Read() (Limit, error) { return ReadAt("/") }

// ReadAt reads the limit as seen under root, a directory standing for "/"
// (tests pass a tree with proc/self/{mountinfo,cgroup} and the cgroup files
// beneath the mount points it names).
func ReadAt(root string) (Limit, error) {
	mountinfo, err := os.ReadFile(path.Join(root, "proc/self/mountinfo"))
	if err != nil {
		return Limit{}, err
	}
	cgroups, err := os.ReadFile(path.Join(root, "proc/self/cgroup"))
	if err != nil {
		return Limit{}, err
	}
	for _, h := range []hierarchy{v1, v2} { // hybrid hosts mount both; memory is a v1 controller there
		dir, mount, ok, err := h.find(mountinfo, cgroups)
		if err != nil {
			return Limit{}, err
		}
		if ok {
			return h.lowest(root, dir, mount)
		}
	}
	return Limit{}, nil
}

// hierarchy is one cgroup version's way to find and read the memory limit.
type hierarchy struct {
	version int
	file    string
	// mounted reports whether a mountinfo entry (fstype, super options)
	// mounts this version's memory hierarchy.
	mounted func(fstype string, superOptions []string) bool
	// member reports whether a /proc/self/cgroup line's controller list
	// names this hierarchy.
	member func(id string, controllers []string) bool
}

var (
	v2 = hierarchy{version: 2, file: "memory.max",
		mounted: func(fstype string, _ []string) bool { return fstype == "cgroup2" },
		member: func(id string, controllers []string) bool {
			return id == "0" && len(controllers) == 1 && controllers[0] == ""
		},
	}
	v1 = hierarchy{version: 1, file: "memory.limit_in_bytes",
		mounted: func(fstype string, opts []string) bool { return fstype == "cgroup" && contains(opts, "memory") },
		member:  func(_ string, controllers []string) bool { return contains(controllers, "memory") },
	}
)

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// find returns the process's cgroup directory in this hierarchy and the
// mount point it lies under; ok is false when the hierarchy is absent.
func (h hierarchy) find(mountinfo, cgroups []byte) (dir, mount string, ok bool, err error) {
	var cgroupPath string
	found := false
	for line := range bytes.Lines(cgroups) {
		// ID:CONTROLLERS:PATH, where PATH may hold ':'
		parts := strings.SplitN(strings.TrimSpace(string(line)), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if h.member(parts[0], strings.Split(parts[1], ",")) {
			cgroupPath, found = parts[2], true
			break
		}
	}
	if !found {
		return "", "", false, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m, ok := parseMount(sc.Text())
		if !ok || !h.mounted(m.fstype, m.superOptions) {
			continue
		}
		// the mount shows the hierarchy from m.root down: the process's
		// cgroup is visible only if it lies there
		rel, ok := strings.CutPrefix(cgroupPath, m.root)
		if m.root == "/" {
			rel, ok = cgroupPath, true
		}
		if !ok || (rel != "" && rel[0] != '/') {
			continue
		}
		dir := path.Join(m.point, rel)
		if !strings.HasPrefix(dir, m.point) { // a path with ".." (never written by the kernel)
			continue
		}
		return dir, m.point, true, nil
	}
	if err := sc.Err(); err != nil {
		return "", "", false, fmt.Errorf("reading mountinfo: %w", err)
	}
	return "", "", false, nil
}

type mount struct {
	root, point, fstype string
	superOptions        []string
}

// parseMount reads one /proc/self/mountinfo line: ID PARENT MAJ:MIN ROOT
// POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS.
func parseMount(line string) (mount, bool) {
	fields := strings.Fields(line)
	sep := -1
	for i := 6; i < len(fields); i++ {
		if fields[i] == "-" {
			sep = i
			break
		}
	}
	if sep < 0 || sep+1 >= len(fields) {
		return mount{}, false
	}
	m := mount{root: unescape(fields[3]), point: unescape(fields[4]), fstype: fields[sep+1]}
	if sep+3 < len(fields) {
		m.superOptions = strings.Split(fields[sep+3], ",")
	}
	return m, true
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and
// backslash.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lowest reads the limit of dir and of every directory above it up to the
// mount point and returns the lowest: a parent's limit binds its children.
func (h hierarchy) lowest(root, dir, mount string) (Limit, error) {
	best := Limit{Version: h.version}
	for d := dir; ; d = path.Dir(d) {
		file := path.Join(d, h.file)
		raw, err := os.ReadFile(path.Join(root, file))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return Limit{}, err
		default:
			v, err := h.parse(string(raw))
			if err != nil {
				return Limit{}, fmt.Errorf("%s: %w", file, err)
			}
			if v > 0 && (best.Bytes == 0 || v < best.Bytes) {
				best.Bytes, best.File = v, file
			}
		}
		if d == mount || d == "/" || d == "." {
			return best, nil
		}
	}
}

// parse reads a limit file; 0 means unlimited.
func (h hierarchy) parse(raw string) (int64, error) {
	s := strings.TrimSpace(raw)
	if h.version == 2 && s == "max" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a byte count", s)
	}
	if v >= unlimitedV1 {
		return 0, nil
	}
	return v, nil
}

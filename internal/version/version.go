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

// Package version is the build's version, stamped at link time:
//
//	go build -ldflags "-X github.com/pdtopo/pdtopo/internal/version.Version=v0.1.0" ./cmd/...
//
// (`make build VERSION=…` does it; without VERSION it stamps `git describe`).
// An unstamped build says "dev". Every binary prints it for --version.
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// Version is the release this binary was built from; set by the linker.
var Version = "dev"

// String is the --version line: the command, the version, and what the
// toolchain recorded (the VCS revision, when the build stamped it).
func String(command string) string {
	s := fmt.Sprintf("%s %s (%s %s/%s", command, Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if rev, dirty := revision(); rev != "" {
		s += ", commit " + rev
		if dirty {
			s += "-dirty"
		}
	}
	return s + ")"
}

func revision() (string, bool) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	var rev string
	var dirty bool
	for _, kv := range info.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			dirty = kv.Value == "true"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return rev, dirty
}

// Requested reports whether the command line asks for the version: a
// --version or -version argument before any "--". Commands built on the
// standard flag package check it before parsing, so --version works whatever
// else the command requires.
func Requested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--version", "-version":
			return true
		}
	}
	return false
}

// Handle prints the version line and reports true when args ask for it.
func Handle(command string, args []string, w io.Writer) bool {
	if !Requested(args) {
		return false
	}
	fmt.Fprintln(w, String(command))
	return true
}

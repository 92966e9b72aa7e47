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

// Command krew-manifest renders the krew plugin manifest template
// (plugins/pdtopo.yaml) for a release: the version, and for every plugin
// archive found in the dist directory its platform and SHA-256.
//
//	go run ./hack/krew-manifest --version v0.1.0 --dist dist > dist/pdtopo.yaml
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"text/template"
)

// archiveName is what `make plugin-dist` writes: kubectl-pdtopo_OS_ARCH.tar.gz.
var archiveName = regexp.MustCompile(`^kubectl-pdtopo_([a-z0-9]+)_([a-z0-9]+)\.tar\.gz$`)

// Platform is one archive of the plugin.
type Platform struct {
	OS, Arch, Archive, SHA256 string
}

// Release is the template's data.
type Release struct {
	Version   string
	Platforms []Platform
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "krew-manifest:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("krew-manifest", flag.ContinueOnError)
	version := fs.String("version", "", "the release tag, e.g. v0.1.0")
	dist := fs.String("dist", "dist", "directory holding kubectl-pdtopo_OS_ARCH.tar.gz archives")
	tmpl := fs.String("template", "plugins/pdtopo.yaml", "the manifest template")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !regexp.MustCompile(`^v\d+\.\d+\.\d+`).MatchString(*version) {
		return fmt.Errorf("--version must be a release tag like v0.1.0 (krew requires semantic versions), got %q", *version)
	}
	platforms, err := scan(*dist)
	if err != nil {
		return err
	}
	t, err := template.ParseFiles(*tmpl)
	if err != nil {
		return err
	}
	return t.Execute(out, Release{Version: *version, Platforms: platforms})
}

// scan finds the plugin archives of dir and hashes them.
func scan(dir string) ([]Platform, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var platforms []Platform
	for _, e := range entries {
		m := archiveName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		sum, err := fileSHA256(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		platforms = append(platforms, Platform{OS: m[1], Arch: m[2], Archive: e.Name(), SHA256: sum})
	}
	if len(platforms) == 0 {
		return nil, errors.New("no kubectl-pdtopo_OS_ARCH.tar.gz archive in " + dir + " (run `make plugin-dist`)")
	}
	sort.Slice(platforms, func(i, j int) bool { return platforms[i].Archive < platforms[j].Archive })
	return platforms, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

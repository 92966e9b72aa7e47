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
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// plugin is the part of krew's Plugin type (v1alpha2) that installs it.
type plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string `json:"version"`
		ShortDescription string `json:"shortDescription"`
		Platforms        []struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			URI    string `json:"uri"`
			SHA256 string `json:"sha256"`
			Bin    string `json:"bin"`
			Files  []struct {
				From string `json:"from"`
				To   string `json:"to"`
			} `json:"files"`
		} `json:"platforms"`
	} `json:"spec"`
}

func TestRendersAValidKrewManifest(t *testing.T) {
	dist := t.TempDir()
	archives := map[string][2]string{ // file → os, arch
		"kubectl-pdtopo_linux_amd64.tar.gz":  {"linux", "amd64"},
		"kubectl-pdtopo_darwin_arm64.tar.gz": {"darwin", "arm64"},
	}
	sums := map[string]string{}
	for name := range archives {
		content := []byte("archive " + name)
		if err := os.WriteFile(filepath.Join(dist, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(content)
		sums[name] = hex.EncodeToString(s[:])
	}
	_ = os.WriteFile(filepath.Join(dist, "other.tar.gz"), []byte("not a plugin archive"), 0o644)

	var out bytes.Buffer
	if err := run([]string{"--version", "v0.3.1", "--dist", dist, "--template", "../../plugins/pdtopo.yaml"}, &out); err != nil {
		t.Fatal(err)
	}
	var p plugin
	if err := yaml.Unmarshal(out.Bytes(), &p); err != nil {
		t.Fatalf("rendered manifest is not YAML: %v\n%s", err, out.String())
	}
	if p.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || p.Kind != "Plugin" || p.Metadata.Name != "pdtopo" ||
		p.Spec.Version != "v0.3.1" || p.Spec.ShortDescription == "" || len(p.Spec.Platforms) != len(archives) {
		t.Fatalf("manifest header wrong: %+v", p)
	}
	for _, pl := range p.Spec.Platforms {
		name := filepath.Base(pl.URI)
		want, ok := archives[name]
		if !ok || pl.Selector.MatchLabels["os"] != want[0] || pl.Selector.MatchLabels["arch"] != want[1] {
			t.Errorf("platform %v with uri %s does not match its archive", pl.Selector.MatchLabels, pl.URI)
		}
		if pl.SHA256 != sums[name] || pl.Bin != "kubectl-pdtopo" || !strings.Contains(pl.URI, "/v0.3.1/") {
			t.Errorf("platform %s: sha256 %s (want %s), bin %s", name, pl.SHA256, sums[name], pl.Bin)
		}
		if len(pl.Files) != 2 || pl.Files[0].From != "kubectl-pdtopo" {
			t.Errorf("platform %s: files %+v", name, pl.Files)
		}
	}
}

func TestRefusesBadInput(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--version", "0.1", "--dist", t.TempDir(), "--template", "../../plugins/pdtopo.yaml"}, &out); err == nil || !strings.Contains(err.Error(), `got "0.1"`) {
		t.Errorf("non-semver version: %v", err)
	}
	if err := run([]string{"--version", "v0.1.0", "--dist", t.TempDir(), "--template", "../../plugins/pdtopo.yaml"}, &out); err == nil || !strings.Contains(err.Error(), "no kubectl-pdtopo_OS_ARCH.tar.gz archive") {
		t.Errorf("empty dist: %v", err)
	}
}

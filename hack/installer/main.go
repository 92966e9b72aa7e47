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

// Command installer writes the kustomize overlay behind `make
// build-installer`: a kustomization.yaml whose resources are config/default
// and whose `images:` set the manager and receiver-agent images, as
// `kustomize edit set image` would (kubectl kustomize has no edit). The
// receiver-agent image reaches the manager through an environment value that
// config/manager/kustomizeconfig.yaml submits to the images transformer.
//
//	go run ./hack/installer --img REPO/manager:TAG --agent-img REPO/agent:TAG --out dist/installer
//	kubectl kustomize dist/installer > dist/install.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// The image names config/ is written with; the overlay replaces them.
const (
	managerImage = "ghcr.io/pdtopo/manager"
	agentImage   = "ghcr.io/pdtopo/receiver-agent"
)

// Image is one entry of a kustomization's `images:`.
type Image struct {
	Name    string `json:"name"`
	NewName string `json:"newName"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// Kustomization is the overlay.
type Kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
	Images     []Image  `json:"images"`
}

var (
	tagRe    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestRe = regexp.MustCompile(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[0-9a-fA-F]{32,}$`)
	nameRe   = regexp.MustCompile(`^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
)

// ParseImage splits an image reference into name, tag and digest:
// "host:5000/team/agent:v1" has the tag v1 (the port is part of the name),
// "team/agent@sha256:…" a digest. A reference without either keeps "latest"
// out of the picture: it is refused, because an installer should pin.
func ParseImage(ref string) (name, tag, digest string, err error) {
	name = ref
	if i := strings.Index(name, "@"); i >= 0 {
		name, digest = name[:i], name[i+1:]
		if !digestRe.MatchString(digest) {
			return "", "", "", fmt.Errorf("image %q: digest %q is not ALGORITHM:HEX", ref, digest)
		}
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
		if !tagRe.MatchString(tag) {
			return "", "", "", fmt.Errorf("image %q: tag %q is not a valid tag", ref, tag)
		}
	}
	if !nameRe.MatchString(name) {
		return "", "", "", fmt.Errorf("image %q: %q is not a valid repository name", ref, name)
	}
	if tag == "" && digest == "" {
		return "", "", "", fmt.Errorf("image %q has neither a tag nor a digest; pin one (REPO:TAG or REPO@sha256:…)", ref)
	}
	return name, tag, digest, nil
}

// Overlay builds the kustomization for an overlay in dir over base.
func Overlay(dir, base, img, agentImg string) (*Kustomization, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	absBase, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	// kustomize takes resources relative to the kustomization, never absolute.
	rel, err := filepath.Rel(absDir, absBase)
	if err != nil {
		return nil, err
	}
	k := &Kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Resources: []string{filepath.ToSlash(rel)}}
	for _, im := range []struct{ old, ref, flag string }{{managerImage, img, "--img"}, {agentImage, agentImg, "--agent-img"}} {
		name, tag, digest, err := ParseImage(im.ref)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", im.flag, err)
		}
		k.Images = append(k.Images, Image{Name: im.old, NewName: name, NewTag: tag, Digest: digest})
	}
	return k, nil
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "installer:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("installer", flag.ContinueOnError)
	img := fs.String("img", "", "manager image, REPO:TAG or REPO@DIGEST")
	agentImg := fs.String("agent-img", "", "receiver-agent image, REPO:TAG or REPO@DIGEST")
	base := fs.String("base", "config/default", "the kustomization the overlay builds on")
	out := fs.String("out", "dist/installer", "directory to write kustomization.yaml into")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *img == "" || *agentImg == "" {
		return errors.New("--img and --agent-img are required")
	}
	if _, err := os.Stat(filepath.Join(*base, "kustomization.yaml")); err != nil {
		return fmt.Errorf("--base %s: %w", *base, err)
	}
	k, err := Overlay(*out, *base, *img, *agentImg)
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	header := "# Generated by `make build-installer` (hack/installer): config/default with the\n# images of this build. Do not edit; rerun make.\n"
	return os.WriteFile(filepath.Join(*out, "kustomization.yaml"), append([]byte(header), b...), 0o644)
}

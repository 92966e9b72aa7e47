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
	"strings"
	"testing"
)

func TestParseImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := []struct {
		ref, name, tag, digest, err string
	}{
		{ref: "ghcr.io/pdtopo/manager:v0.1.0", name: "ghcr.io/pdtopo/manager", tag: "v0.1.0"},
		{ref: "localhost:5000/manager:dev", name: "localhost:5000/manager", tag: "dev"},
		{ref: "registry.example:5000/team/agent@" + digest, name: "registry.example:5000/team/agent", digest: digest},
		{ref: "team/agent:v1@" + digest, name: "team/agent", tag: "v1", digest: digest},
		{ref: "localhost:5000/manager", err: "neither a tag nor a digest"},
		{ref: "manager", err: "neither a tag nor a digest"},
		{ref: "Team/Manager:v1", err: "not a valid repository name"},
		{ref: "team/manager:-bad", err: "not a valid tag"},
		{ref: "team/manager@md5:12", err: "not ALGORITHM:HEX"},
		{ref: "", err: "not a valid repository name"},
	}
	for _, c := range cases {
		name, tag, dg, err := ParseImage(c.ref)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseImage(%q) = %v, want an error with %q", c.ref, err, c.err)
			}
			continue
		}
		if err != nil || name != c.name || tag != c.tag || dg != c.digest {
			t.Errorf("ParseImage(%q) = %q %q %q %v, want %q %q %q", c.ref, name, tag, dg, err, c.name, c.tag, c.digest)
		}
	}
}

func TestOverlayIsRelativeAndNamesBothImages(t *testing.T) {
	k, err := Overlay("/tmp/x/overlay", "/repo/config/default", "reg.example/m:v2", "reg.example/a:v3")
	if err != nil {
		t.Fatal(err)
	}
	if len(k.Resources) != 1 || k.Resources[0] != "../../../repo/config/default" {
		t.Errorf("resources %v, want the base relative to the overlay", k.Resources)
	}
	want := []Image{{Name: "ghcr.io/pdtopo/manager", NewName: "reg.example/m", NewTag: "v2"}, {Name: "ghcr.io/pdtopo/receiver-agent", NewName: "reg.example/a", NewTag: "v3"}}
	if len(k.Images) != 2 || k.Images[0] != want[0] || k.Images[1] != want[1] {
		t.Errorf("images %+v, want %+v", k.Images, want)
	}
	if _, err := Overlay("o", "b", "reg.example/m:v2", "nope"); err == nil || !strings.Contains(err.Error(), "--agent-img") {
		t.Errorf("unpinned agent image: %v", err)
	}
}

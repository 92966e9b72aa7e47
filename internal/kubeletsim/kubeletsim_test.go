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

package kubeletsim_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pdtopo/pdtopo/internal/kubeletsim"
)

func TestExpandAsTheKubeletDoes(t *testing.T) {
	env := map[string]string{"POD_IP": "10.0.0.7", "EMPTY": ""}
	for in, want := range map[string]string{
		"--probe-addr=$(POD_IP):9440": "--probe-addr=10.0.0.7:9440",
		"$(POD_IP)$(POD_IP)":          "10.0.0.710.0.0.7",
		"$$(POD_IP)":                  "$(POD_IP)",
		"$(UNSET)":                    "$(UNSET)",
		"x$(EMPTY)y":                  "xy",
		"$(POD_IP":                    "$(POD_IP",
		"a$b $":                       "a$b $",
	} {
		if got := kubeletsim.Expand(in, env); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// The kubelet probes the named port on the pod IP, bracketing IPv6.
func TestProbeBase(t *testing.T) {
	c := &corev1.Container{Name: "agent", Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 1}, {Name: "probe", ContainerPort: 9440}}}
	for ip, want := range map[string]string{"10.0.0.7": "http://10.0.0.7:9440", "fd00::7": "http://[fd00::7]:9440"} {
		got, err := kubeletsim.ProbeBase(c, kubeletsim.PodFacts{PodIP: ip}, "probe")
		if err != nil || got != want {
			t.Errorf("pod IP %s: %q, %v; want %q", ip, got, err, want)
		}
	}
	if _, err := kubeletsim.ProbeBase(c, kubeletsim.PodFacts{PodIP: "10.0.0.7"}, "absent"); err == nil {
		t.Error("a port name the container lacks gave no error")
	}
}

// Two writes: the second payload replaces the first whole; names that left
// the payload leave the directory; the old generation's directory is gone;
// every visible name goes through ..data.
func TestWriteAtomicSwapsGenerations(t *testing.T) {
	dir := t.TempDir()
	if err := kubeletsim.WriteAtomic(dir, map[string][]byte{"a": []byte("1"), "b": []byte("2")}); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Readlink(filepath.Join(dir, "..data"))
	if err := kubeletsim.WriteAtomic(dir, map[string][]byte{"b": []byte("3"), "c": []byte("4")}); err != nil {
		t.Fatal(err)
	}
	second, _ := os.Readlink(filepath.Join(dir, "..data"))
	files, err := kubeletsim.VisibleFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"b", "c"}) {
		t.Fatalf("visible files %v, want [b c]", files)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b")); string(b) != "3" {
		t.Errorf("b = %q, want the second generation's 3", b)
	}
	if target, _ := os.Readlink(filepath.Join(dir, "c")); target != filepath.Join("..data", "c") {
		t.Errorf("c links to %q, want ..data/c", target)
	}
	if first == "" || first == second {
		t.Fatalf("..data was %q then %q: not swapped", first, second)
	}
	if _, err := os.Stat(filepath.Join(dir, first)); !os.IsNotExist(err) {
		t.Errorf("the first generation's directory %s is still there (%v)", first, err)
	}
}

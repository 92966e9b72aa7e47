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

package memlimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree writes files (path → content) under a fresh root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const (
	v2Mount     = "29 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	v1Memory    = "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	v1CPU       = "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	hybridV2    = "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	rootfs      = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
	v1Unlimited = "9223372036854771712\n"
)

func TestReadAt(t *testing.T) {
	cases := []struct {
		name    string
		files   map[string]string
		want    Limit
		wantErr string
	}{
		{"v2 container with its own cgroup namespace", map[string]string{
			"proc/self/mountinfo": rootfs + v2Mount, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/memory.max": "536870912\n",
		}, Limit{Bytes: 512 << 20, File: "/sys/fs/cgroup/memory.max", Version: 2}, ""},
		{"v2 without a limit", map[string]string{
			"proc/self/mountinfo": rootfs + v2Mount, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/memory.max": "max\n",
		}, Limit{Version: 2}, ""},
		{"v2 pod limit above an unlimited container", map[string]string{
			"proc/self/mountinfo": rootfs + v2Mount, "proc/self/cgroup": "0::/kubepods/pod1/ctr\n",
			"sys/fs/cgroup/kubepods/pod1/ctr/memory.max": "max\n",
			"sys/fs/cgroup/kubepods/pod1/memory.max":     "268435456\n",
			"sys/fs/cgroup/kubepods/memory.max":          "1073741824\n",
		}, Limit{Bytes: 256 << 20, File: "/sys/fs/cgroup/kubepods/pod1/memory.max", Version: 2}, ""},
		{"v1, hierarchy mounted from its root (hybrid host)", map[string]string{
			"proc/self/mountinfo": rootfs + v1CPU + v1Memory + hybridV2,
			"proc/self/cgroup":    "9:name=systemd:/\n4:memory:/process_api/3fe9\n1:cpu:/\n0::/\n",
			"sys/fs/cgroup/memory/process_api/3fe9/memory.limit_in_bytes": "1073741824\n",
			"sys/fs/cgroup/memory/process_api/memory.limit_in_bytes":      v1Unlimited,
			"sys/fs/cgroup/memory/memory.limit_in_bytes":                  v1Unlimited,
		}, Limit{Bytes: 1 << 30, File: "/sys/fs/cgroup/memory/process_api/3fe9/memory.limit_in_bytes", Version: 1}, ""},
		{"v1 container: its cgroup mounted as the root", map[string]string{
			"proc/self/mountinfo":                        rootfs + "34 30 0:31 /docker/abc /sys/fs/cgroup/memory ro,relatime - cgroup cgroup rw,memory\n",
			"proc/self/cgroup":                           "11:memory:/docker/abc\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": "268435456\n",
		}, Limit{Bytes: 256 << 20, File: "/sys/fs/cgroup/memory/memory.limit_in_bytes", Version: 1}, ""},
		{"v1 unlimited", map[string]string{
			"proc/self/mountinfo": rootfs + v1Memory, "proc/self/cgroup": "4:memory:/\n",
			"sys/fs/cgroup/memory/memory.limit_in_bytes": v1Unlimited,
		}, Limit{Version: 1}, ""},
		{"no memory cgroup", map[string]string{
			"proc/self/mountinfo": rootfs, "proc/self/cgroup": "1:cpu:/\n",
		}, Limit{}, ""},
		{"garbled limit", map[string]string{
			"proc/self/mountinfo": rootfs + v2Mount, "proc/self/cgroup": "0::/\n",
			"sys/fs/cgroup/memory.max": "lots\n",
		}, Limit{}, `/sys/fs/cgroup/memory.max: "lots" is not a byte count`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadAt(tree(t, c.files))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %+v, %v; want an error with %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

// The machine's own cgroups read without error (whatever their limit).
func TestReadThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/self/mountinfo"); err != nil {
		t.Skip("no /proc here")
	}
	if _, err := Read(); err != nil {
		t.Fatal(err)
	}
}

func TestUnescape(t *testing.T) {
	if got := unescape(`/mnt/a\040b\134c`); got != `/mnt/a b\c` {
		t.Fatalf("unescape: %q", got)
	}
}

// FuzzFind: any mountinfo and cgroup text is read without a panic, and a
// directory found lies under its mount point.
func FuzzFind(f *testing.F) {
	f.Add([]byte(rootfs+v1Memory+hybridV2), []byte("4:memory:/a/b\n0::/\n"))
	f.Add([]byte(v2Mount), []byte("0::/kubepods/x\n"))
	f.Add([]byte("1 2 3 /a /b - cgroup\n1 - x"), []byte("::\n0::"))
	f.Add([]byte(v2Mount), []byte("0::/../../etc\n"))
	f.Fuzz(func(t *testing.T, mountinfo, cgroups []byte) {
		for _, h := range []hierarchy{v1, v2} {
			dir, mount, ok, _ := h.find(mountinfo, cgroups)
			if ok && !strings.HasPrefix(dir, mount) {
				t.Fatalf("directory %q is not under its mount point %q", dir, mount)
			}
		}
	})
}

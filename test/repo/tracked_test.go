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

package repo

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository holds without naming it
// in largeTestData: source, manifests and golden files stay well below it;
// anything above is a build output, an archive or data that needs a reason.
const maxTrackedBytes = 1 << 20

// largeTestData lists the tracked files allowed above maxTrackedBytes, each
// with why it is test data that must be kept byte for byte. None today.
var largeTestData = map[string]string{}

// The rule for executables: a tracked file may be executable (mode 100755)
// only if it is a script that says its interpreter (starts with "#!"), so
// that what runs is readable in review; and no tracked file, executable or
// not, may be a compiled program (ELF, Mach-O or PE), whatever its mode,
// since a binary committed without +x is still a build output.
func trackedFileProblem(p string, mode uint32, size int64, head []byte) string {
	switch {
	case compiledProgram(head):
		return "is a compiled program: build it into bin/ (gitignored), never commit it"
	case mode&0o111 != 0 && !bytes.HasPrefix(head, []byte("#!")):
		return "is executable but not a script with a #! line: drop the +x bit (git update-index --chmod=-x)"
	case size > maxTrackedBytes && largeTestData[p] == "":
		return fmt.Sprintf("is %d bytes, over %d: keep it out of git, or list it in largeTestData with why it is test data", size, maxTrackedBytes)
	}
	return ""
}

// compiledProgram reports whether head starts like an ELF, Mach-O (thin or
// universal) or PE (Windows) executable.
func compiledProgram(head []byte) bool {
	for _, magic := range [][]byte{
		[]byte("\x7fELF"),
		{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe}, // Mach-O 32-bit
		{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe}, // Mach-O 64-bit
		{0xca, 0xfe, 0xba, 0xbe}, // Mach-O universal
		[]byte("MZ"),             // PE
	} {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	return false
}

// trackedFile is a file of the repository with its mode as git records it.
type trackedFile struct {
	path string
	mode uint32
}

// trackedFiles lists the files git tracks, with the mode of the index
// (100755 or 100644). A copy of the tree without .git (an exported archive)
// is walked instead, with the files' own modes.
func trackedFiles(t *testing.T, root string) []trackedFile {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "--stage", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Logf("git ls-files: %v; walking the tree instead", err)
		return walkedFiles(t, root)
	}
	var files []trackedFile
	for _, rec := range bytes.Split(bytes.TrimRight(out, "\x00"), []byte{0}) {
		// "<mode> <object> <stage>\t<path>"
		meta, p, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			t.Fatalf("git ls-files record %q", rec)
		}
		var mode uint32
		if _, err := fmt.Sscanf(string(meta), "%o", &mode); err != nil {
			t.Fatalf("git ls-files record %q: %v", rec, err)
		}
		if mode&0o170000 != 0o100000 { // symlinks and submodules
			continue
		}
		files = append(files, trackedFile{path: string(p), mode: mode & 0o777})
	}
	if len(files) == 0 {
		t.Fatal("git ls-files listed nothing")
	}
	return files
}

func walkedFiles(t *testing.T, root string) []trackedFile {
	t.Helper()
	var files []trackedFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files = append(files, trackedFile{path: filepath.ToSlash(rel), mode: uint32(info.Mode().Perm())})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// No compiled programs, no executables that are not scripts, no large files
// but listed test data.
func TestNoBinariesTracked(t *testing.T) {
	root := repoRoot(t)
	files := trackedFiles(t, root)
	for _, f := range files {
		full := filepath.Join(root, filepath.FromSlash(f.path))
		info, err := os.Stat(full)
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		head := make([]byte, 4)
		fh, err := os.Open(full)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := fh.Read(head)
		fh.Close()
		if why := trackedFileProblem(f.path, f.mode, info.Size(), head[:n]); why != "" {
			t.Errorf("%s %s", f.path, why)
		}
	}
	for p := range largeTestData {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("largeTestData names %s: %v", p, err)
		}
	}
}

// The rules themselves.
func TestTrackedFileRules(t *testing.T) {
	elf := []byte("\x7fELF")
	for _, c := range []struct {
		name string
		mode uint32
		size int64
		head []byte
		bad  bool
	}{
		{"a Go source", 0o644, 2000, []byte("/*\nC"), false},
		{"a script with a #! line", 0o755, 3000, []byte("#!/u"), false},
		{"an ELF executable", 0o755, 4 << 20, elf, true},
		{"an ELF file without +x", 0o644, 4096, elf, true},
		{"a Mach-O executable", 0o755, 4096, []byte{0xcf, 0xfa, 0xed, 0xfe}, true},
		{"a PE executable", 0o644, 4096, []byte("MZ\x90\x00"), true},
		{"an executable text file without #!", 0o755, 100, []byte("echo"), true},
		{"a large text file", 0o644, maxTrackedBytes + 1, []byte("abcd"), true},
		{"a text file of exactly the limit", 0o644, maxTrackedBytes, []byte("abcd"), false},
	} {
		if got := trackedFileProblem("some/file", c.mode, c.size, c.head); (got != "") != c.bad {
			t.Errorf("%s: problem %q, want bad=%v", c.name, got, c.bad)
		}
	}
	largeTestData["some/golden.bin"] = "for the rule's test"
	defer delete(largeTestData, "some/golden.bin")
	if got := trackedFileProblem("some/golden.bin", 0o644, maxTrackedBytes+1, []byte("abcd")); got != "" {
		t.Errorf("listed large test data refused: %s", got)
	}
}

// mainPackages lists the directories under cmd/, hack/ and conformance/ (of
// this module) whose non-test Go files are package main.
func mainPackages(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	var dirs []string
	fset := token.NewFileSet()
	for _, file := range repoFiles(t, root, ".go") {
		dir := path.Dir(file)
		top, _, _ := strings.Cut(file, "/")
		if (top != "cmd" && top != "hack" && top != "conformance") || strings.HasSuffix(file, "_test.go") || seen[dir] || inOtherModule(root, dir) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(root, file), nil, parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "main" {
			seen[dir] = true
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// `go build ./hack/mutate` drops a binary named mutate at the root, and
// `go build` inside the package's directory drops one there: .gitignore
// names both for every main package, so neither can be committed by
// accident (as installer and mutate once were).
func TestGoBuildOutputsAreIgnored(t *testing.T) {
	root := repoRoot(t)
	f, err := os.Open(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ignored := map[string]bool{}
	for s := bufio.NewScanner(f); s.Scan(); {
		ignored[strings.TrimSpace(s.Text())] = true
	}
	dirs := mainPackages(t, root)
	if len(dirs) < 4 {
		t.Fatalf("found only %v as main packages: the walk is broken", dirs)
	}
	for _, dir := range dirs {
		name := path.Base(dir)
		for _, out := range []string{"/" + name, "/" + dir + "/" + name} {
			if !ignored[out] {
				t.Errorf("main package %s: .gitignore lacks %s (what `go build` writes without -o)", dir, out)
			}
		}
	}
}

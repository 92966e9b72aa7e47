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

// Command mutate is the mutation pass: it applies deliberate bugs, one at a
// time, to a temporary copy of the repository (the committed HEAD) and runs
// the tests of the packages each bug belongs to. A mutant is killed when a
// test fails; one that survives is a hole in the tests. It exits non-zero
// when any mutant survives or no longer applies.
//
//	go run ./hack/mutate            # every mutant (CPU heavy: one at a time)
//	go run ./hack/mutate -list      # the mutants, without running anything
//	go run ./hack/mutate -run dummy # the mutants whose name contains "dummy"
//
// The envtest suites need kube-apiserver and etcd: KUBEBUILDER_ASSETS, or
// bin/ of the repository (`make controlplane`).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

func main() {
	list := flag.Bool("list", false, "list the mutants and exit")
	only := flag.String("run", "", "run only the mutants whose name contains this")
	timeout := flag.Duration("timeout", 10*time.Minute, "the longest one mutant's tests may run (a hang counts as killed)")
	baseline := flag.Bool("baseline", true, "first run the selected mutants' packages unmutated: a failure there would pass for a kill")
	flag.Parse()
	if *list {
		if err := listMutants(); err != nil {
			fmt.Fprintln(os.Stderr, "mutate:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*only, *timeout, *baseline); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

func run(only string, timeout time.Duration, baseline bool) error {
	root, err := gitOutput("", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	env, err := testEnv(root)
	if err != nil {
		return err
	}
	var selected []mutant
	for _, m := range mutants {
		if only == "" || strings.Contains(m.Name, only) {
			selected = append(selected, m)
		}
	}
	tree, err := os.MkdirTemp("", "pdtopo-mutate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tree)
	if err := copyHEAD(root, tree); err != nil {
		return err
	}
	if baseline {
		if err := runBaseline(tree, selected, env, timeout); err != nil {
			return err
		}
	}
	var results []result
	for _, m := range selected {
		r := apply(tree, m, env, timeout)
		results = append(results, r)
		fmt.Printf("%-34s %-9s %6s  %s\n", m.Name, r.verdict, r.took.Round(time.Second), r.detail)
	}
	return report(results)
}

// listMutants prints every mutant and whether it still applies to the
// working tree (its code occurs exactly once).
func listMutants() error {
	root, err := gitOutput("", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	stale := 0
	for _, m := range mutants {
		state := "applies"
		b, err := os.ReadFile(filepath.Join(root, m.File))
		if n := bytes.Count(b, []byte(m.Old)); err != nil || n != 1 {
			state, stale = fmt.Sprintf("STALE (%d matches)", n), stale+1
		}
		fmt.Printf("%-34s %-34s %-18s %s\n", m.Name, m.File, state, m.Bug)
	}
	if stale > 0 {
		return fmt.Errorf("%d mutants no longer apply", stale)
	}
	return nil
}

// result is what one mutant came to.
type result struct {
	m       mutant
	verdict string // killed, SURVIVED, STALE (does not apply), BROKEN (does not build)
	detail  string
	took    time.Duration
}

// apply mutates one file of tree, runs the mutant's packages' tests and
// restores the file.
func apply(tree string, m mutant, env []string, timeout time.Duration) result {
	path := filepath.Join(tree, m.File)
	orig, err := os.ReadFile(path)
	if err != nil {
		return result{m: m, verdict: "STALE", detail: err.Error()}
	}
	if n := bytes.Count(orig, []byte(m.Old)); n != 1 {
		return result{m: m, verdict: "STALE", detail: fmt.Sprintf("the code to mutate occurs %d times in %s (want once): update the mutant", n, m.File)}
	}
	if err := os.WriteFile(path, bytes.Replace(orig, []byte(m.Old), []byte(m.New), 1), 0o644); err != nil {
		return result{m: m, verdict: "STALE", detail: err.Error()}
	}
	defer func() {
		// A file left mutated would make every later mutant's verdict wrong.
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: restoring %s: %v\n", path, err)
			os.Exit(1)
		}
	}()

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", m.testArgs("-failfast")...)
	cmd.Dir, cmd.Env = tree, env
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	switch {
	case ctx.Err() != nil:
		return result{m: m, verdict: "killed", detail: "the tests hung past " + timeout.String(), took: took}
	case err == nil:
		return result{m: m, verdict: "SURVIVED", detail: "every test of " + m.tests() + " passed", took: took}
	case bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")):
		return result{m: m, verdict: "BROKEN", detail: "the mutant does not build: " + firstLines(out, 3), took: took}
	}
	return result{m: m, verdict: "killed", detail: killers(out), took: took}
}

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// killers names the tests that failed (the deepest subtests), or the first
// lines of the output when no test names itself (a panic, a TestMain).
func killers(out []byte) string {
	var names []string
	for _, m := range failLine.FindAllSubmatch(out, -1) {
		name := string(m[1])
		if len(names) > 0 && strings.HasPrefix(name, names[len(names)-1]+"/") {
			names[len(names)-1] = name
			continue
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return "no test named: " + firstLines(out, 2)
	}
	return strings.Join(names, ", ")
}

func firstLines(b []byte, n int) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], " | ")
}

func report(results []result) error {
	var bad []string
	killed := 0
	for _, r := range results {
		if r.verdict == "killed" {
			killed++
		} else {
			bad = append(bad, r.m.Name+" "+r.verdict)
		}
	}
	fmt.Printf("\n%d mutants: %d killed", len(results), killed)
	if len(bad) == 0 {
		fmt.Println()
		return nil
	}
	fmt.Printf(", %d not: %s\n", len(bad), strings.Join(bad, ", "))
	return errors.New("every mutant must be killed: add a test for each survivor, update stale ones")
}

// copyHEAD writes the committed tree of HEAD into dir.
func copyHEAD(root, dir string) error {
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", "HEAD")
	extract := exec.Command("tar", "-x", "-C", dir)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	extract.Stdin = pipe
	if err := extract.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive HEAD: %w", err)
	}
	return extract.Wait()
}

// runBaseline runs every package set of the selected mutants once, without
// a mutant: they must pass, or a failure would count as a kill.
func runBaseline(tree string, selected []mutant, env []string, timeout time.Duration) error {
	seen := map[string]bool{}
	for _, m := range selected {
		key := m.tests()
		if seen[key] {
			continue
		}
		seen[key] = true
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		cmd := exec.CommandContext(ctx, "go", m.testArgs()...)
		cmd.Dir, cmd.Env = tree, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return fmt.Errorf("the tests of %s fail without any mutant (%v); fix them first:\n%s", key, err, out)
		}
		fmt.Printf("%-34s %-9s %6s  %s\n", "(baseline) "+key, "passes", time.Since(start).Round(time.Second), "")
	}
	return nil
}

// testEnv points the envtest suites at the control-plane binaries of the
// real checkout (the copy has no bin/): KUBEBUILDER_ASSETS, else bin/.
func testEnv(root string) ([]string, error) {
	env := os.Environ()
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(root, "bin")
		env = append(env, "KUBEBUILDER_ASSETS="+dir)
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return nil, fmt.Errorf("the envtest suites need %s in %s: run `make controlplane` or set KUBEBUILDER_ASSETS", b, dir)
		}
	}
	return env, nil
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

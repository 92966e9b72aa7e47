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
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/agentclient"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

func writePlanFile(t *testing.T, l planv1.Layout) string {
	t.Helper()
	b, err := json.Marshal(fixtures.MustPlan(l))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFlagsRefuseWithTheNumbers(t *testing.T) {
	cases := map[string]struct {
		args []string
		says string
	}{
		"no rank":               {[]string{"--plan-file", "x"}, "--first-rank F --rank-count N"},
		"no source":             {[]string{"--engine-rank", "0"}, "exactly one plan source"},
		"two sources":           {[]string{"--engine-rank", "0", "--plan-file", "x", "--plan-dir", "y"}, "exactly one plan source"},
		"kubeconfig alone":      {[]string{"--engine-rank", "0", "--kubeconfig", "k", "--plan-dir", "y"}, "--kubeconfig is only used with --pdpair"},
		"seal without dir":      {[]string{"--engine-rank", "0", "--plan-seal-dir", "s", "--plan-file", "y"}, "--plan-seal-dir is only used with --plan-dir"},
		"keys without dir":      {[]string{"--engine-rank", "0", "--plan-public-keys", "k", "--plan-file", "y"}, "--plan-public-keys is only used with --plan-dir"},
		"keys without pair":     {[]string{"--engine-rank", "0", "--plan-public-keys", "k", "--plan-dir", "y"}, "needs --plan-pdpair"},
		"pair without keys":     {[]string{"--engine-rank", "0", "--plan-pdpair", "p", "--plan-dir", "y"}, "only used with --plan-public-keys"},
		"bad key":               {[]string{"--engine-rank", "0", "--plan-public-keys", "AAAA", "--plan-pdpair", "ns/p", "--plan-dir", "y"}, "not a base64 ed25519 public key"},
		"keys for another pair": {[]string{"--engine-rank", "0", "--plan-public-keys", testPublicKey, "--plan-pdpair", "ns/b", "--pdpair", "ns/a"}, "--plan-pdpair ns/b is not the pair --pdpair \"ns/a\" reads"},
		"keys and seal":         {[]string{"--engine-rank", "0", "--plan-public-keys", "k", "--plan-pdpair", "ns/p", "--plan-seal-dir", "s", "--plan-dir", "y"}, "not both"},
		"bad timeout":           {[]string{"--engine-rank", "0", "--plan-file", "x", "--waiting-timeout", "0s"}, "--waiting-timeout must be positive"},
		"stray argument":        {[]string{"--engine-rank", "0", "--plan-file", "x", "extra"}, "unexpected arguments"},
		"unknown flag":          {[]string{"--engine-rank", "0", "--plan-file", "x", "--nope"}, "not defined"},
		"heartbeat misses":      {[]string{"--engine-rank", "0", "--plan-file", "x", "--heartbeat-misses", "0"}, "at least 1"},
		"both rank forms":       {[]string{"--engine-rank", "0", "--first-rank", "0", "--plan-file", "x"}, "not both"},
		"negative first":        {[]string{"--first-rank", "-2", "--plan-file", "x"}, "--first-rank is -2"},
		"zero ranks":            {[]string{"--first-rank", "0", "--rank-count", "0", "--socket-dir", "/s", "--plan-file", "x"}, "--rank-count is 0; one agent serves 1 to 64 ranks"},
		"too many ranks":        {[]string{"--first-rank", "0", "--rank-count", "65", "--socket-dir", "/s", "--plan-file", "x"}, "--rank-count is 65; one agent serves 1 to 64 ranks"},
		"past the rank bound":   {[]string{"--first-rank", "65535", "--rank-count", "2", "--socket-dir", "/s", "--plan-file", "x"}, "ends at engine rank 65536; engine ranks are below 65536"},
		"ranks on --listen":     {[]string{"--first-rank", "0", "--rank-count", "2", "--plan-file", "x"}, "--rank-count 2 needs --socket-dir"},
		"listen and dir":        {[]string{"--engine-rank", "0", "--listen", "127.0.0.1:1", "--socket-dir", "/s", "--plan-file", "x"}, "not both"},
		"one status port":       {[]string{"--first-rank", "0", "--rank-count", "2", "--socket-dir", "/s", "--status-addr", "10.0.0.1:7000", "--plan-file", "x"}, "names one port but --rank-count is 2"},
		"ipv6 status host":      {[]string{"--engine-rank", "0", "--status-host", "fd00::7", "--plan-file", "x"}, "--status-host fd00::7 is an IPv6 address"},
		"ipv6 status addr":      {[]string{"--engine-rank", "0", "--status-addr", "[fd00::7]:0", "--plan-file", "x"}, "--status-addr fd00::7 is an IPv6 address"},
		"ipv6 advertised":       {[]string{"--engine-rank", "0", "--status-host", "10.0.0.7", "--advertise-host", "::ffff:10.0.0.7", "--plan-file", "x"}, "--advertise-host ::ffff:10.0.0.7 is an IPv6"},
		"both probe flags":      {[]string{"--engine-rank", "0", "--probe-port", "9440", "--probe-addr", "127.0.0.1:1", "--plan-file", "x"}, "either --probe-addr or --probe-port"},
		"probe port range":      {[]string{"--engine-rank", "0", "--probe-port", "70000", "--plan-file", "x"}, "--probe-port 70000 is not a TCP port"},
		"status host not IP":    {[]string{"--engine-rank", "0", "--status-host", "pod.local", "--plan-file", "x"}, "--status-host \"pod.local\" is not an IP"},
		"long socket paths":     {[]string{"--engine-rank", "0", "--socket-dir", "/" + strings.Repeat("d", 100), "--plan-file", "x"}, "unix sockets allow 107"},
	}
	for name, c := range cases {
		_, err := parseFlags(c.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v gave %v, want an error saying %q", name, c.args, err, c.says)
		}
	}
	for name, args := range map[string][]string{
		"contract":      {"--first-rank=4", "--rank-count=4", "--socket-dir=/run/pdtopo", "--status-host=10.0.0.7", "--probe-port=9440", "--plan-dir=/etc/pdtopo/plans"},
		"single rank":   {"--engine-rank", "3", "--plan-file", "x", "--listen", "unix:/tmp/a.sock"},
		"in-cluster":    {"--engine-rank", "0", "--pdpair", "llm/pair"},
		"signed api":    {"--engine-rank", "0", "--pdpair", "llm/pair", "--plan-public-keys", testPublicKey},
		"at 64 ranks":   {"--first-rank", "0", "--rank-count", "64", "--socket-dir", "/s", "--plan-dir", "y"},
		"any status ip": {"--first-rank", "0", "--rank-count", "2", "--socket-dir", "/s", "--status-addr", "10.0.0.1:0", "--plan-dir", "y"},
	} {
		if _, err := parseFlags(args, io.Discard); err != nil {
			t.Errorf("%s: %v refused: %v", name, args, err)
		}
	}
	for args, want := range map[string]string{
		"--status-host=10.0.0.7 --probe-port=9440":  "10.0.0.7:9440",
		"--probe-port=9440":                         "127.0.0.1:9440",
		"--status-host=10.0.0.7 --probe-addr=:9441": ":9441",
		"--status-host=10.0.0.7":                    "",
	} {
		o, err := parseFlags(append([]string{"--engine-rank=0", "--plan-file=x"}, strings.Fields(args)...), io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if got := o.probeListenAddr(); got != want {
			t.Errorf("%s: the probe binds %q, want %q", args, got, want)
		}
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "10.1.2.3:80", ":0", "example.com:80", "unix:"} {
		if ln, err := listen(addr); err == nil {
			ln.Close()
			t.Errorf("listen %q accepted", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0", "unix:" + filepath.Join(t.TempDir(), "api.sock")} {
		ln, err := listen(addr)
		if err != nil {
			if strings.Contains(addr, "::1") { // hosts without IPv6 loopback
				continue
			}
			t.Fatalf("listen %q: %v", addr, err)
		}
		ln.Close()
	}
	notSocket := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notSocket, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := listen("unix:" + notSocket); err == nil {
		t.Fatal("listen replaced a regular file")
	}
}

func TestPrintPlan(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	path := writePlanFile(t, l)
	var out bytes.Buffer
	err := run(context.Background(), []string{"--first-rank", "3", "--rank-count", "2", "--socket-dir", t.TempDir(), "--plan-file", path, "--print-plan"}, &out, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "engine rank 4 is outside the decode fleet of 4 ranks") {
		t.Fatalf("engine ranks 3..4 of a 4-rank decode fleet: %v", err)
	}
	out.Reset()
	if err := run(context.Background(), []string{"--first-rank", "1", "--rank-count", "2", "--socket-dir", t.TempDir(), "--plan-file", path, "--print-plan"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	set := fixtures.MustPlan(l)
	want1, _ := json.Marshal(set.Plans[1])
	want2, _ := json.Marshal(set.Plans[2])
	if got := strings.TrimSpace(out.String()); got != string(want1)+"\n"+string(want2) {
		t.Fatalf("printed %s\nwant the plans of decode TP ranks 1 and 2", got)
	}
}

// Single-rank mode: --engine-rank and --listen, as before per-pod agents.
func TestAgentSingleRankWithPlanFile(t *testing.T) {
	l := fixtures.FragmentedP8D4()
	peer := startPeer(t, l)
	peer.Script(77, prefillpeer.Success(5))
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--engine-rank", "1", "--plan-file", writePlanFile(t, l), "--listen", "unix:" + sock, "--log-level", "warn"}, io.Discard, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	}()
	c := agentclient.New(sock, agentclient.Options{})
	defer c.Close()
	waitAnswers(t, c)
	register(t, c, l, 1)
	if got := roomThroughAPI(t, c, peer.BootstrapAddr(), 77); got.Status != receiver.Success || got.BootstrapToken != 5 {
		t.Fatalf("room 77: %+v", got)
	}
	if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("--listen unix: socket mode %v (%v), want 0600", st.Mode(), err)
	}
}

// testPublicKey is a well-formed operator key (32 bytes, base64) for flag
// checks that get past parsing the keys.
const testPublicKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="

// With --pdpair, signed plans must be for the pair read unless
// --plan-pdpair names it again.
func TestSignedAPISourceIsForThePairRead(t *testing.T) {
	o, err := parseFlags([]string{"--engine-rank", "0", "--pdpair", "llm/pair", "--plan-public-keys", testPublicKey}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	s, err := o.signed()
	if err != nil || s == nil {
		t.Fatalf("--pdpair with keys gives signature check %v, %v; want one", s, err)
	}
	if got := o.signedPDPair(); got != "llm/pair" {
		t.Errorf("signed plans must be for %q, want llm/pair", got)
	}
}

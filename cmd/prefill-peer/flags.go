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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/pkg/engine/tokenspeed"
	"github.com/pdtopo/pdtopo/pkg/kvwire"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
)

const usage = `prefill-peer — the prefill side of the pdtopo KV handshake, for demos and tests.

It runs a bootstrap server (PUT/GET /route, /health) and one ZMQ PULL endpoint
per prefill rank. Each rank registers with the bootstrap server like a
reference prefill rank, parses the registrations and requests decode ranks
send it, checks their transfer fragments against its own buffer layout, and
answers every room over ZMQ PUSH to the decode rank's status port. No KV bytes
move. It serves until interrupted, then prints what each rank saw.

Usage:
  prefill-peer -f PDPAIR.yaml [--name NAME] [flags]   play a PDPair's prefill side
  prefill-peer --tp N [--dp N] --kv-item-lens LIST [flags]
  prefill-peer --tp N [--dp N] --contract FILE [flags]  the cache-contract wire

Layout:
  -f FILE               PDPair manifest (YAML or JSON); its prefill side is played
  --name NAME           which PDPair of the file, when it holds several
  --check-transfers     with -f: execute every request's fragments byte by byte,
                        as the reference prefill does, on synthetic memories of
                        both sides of the PDPair's layout; a byte that would land
                        where the decode rank's layout wants another fails the
                        room (WrongBytes)
  --tp N                prefill world size, all dp groups (tensorParallelSize)
  --dp N                dp attention groups; divides --tp (default 1)
  --mla-l15             register the MLA L1.5 cache flag
  --kv-item-lens LIST   every rank's KV item bytes per buffer, in pointer order
  --kv-unit-lens LIST   KV unit bytes per buffer (default 1 each)
  --state-item-lens LIST, --state-unit-lens LIST   the same for state buffers
                        A LIST is comma-separated; NxV repeats V N times:
                        "80x256,80x256" is 160 buffers of 256 bytes.
  --contract FILE       speak tokenspeed's cache-contract wire
                        (docs/wire.md): every rank's cache contract,
                        its wire JSON; with --tp and --dp, instead of the
                        buffer lengths. Registrations are planned and
                        manifests checked as the engine's prefill does.

Endpoints:
  --host ADDR           address to bind and advertise (default 127.0.0.1)
  --bootstrap-port N    bootstrap server port; 0 picks a free one (default 8998)
  --register-with URL   run no bootstrap server: the ranks register (PUT /route)
                        with this one, http://HOST:PORT (the engine's own
                        server, or one that outlives the peer: a restarted
                        peer's ranks come back there on new ports)

Behaviour of every room (tests script rooms one by one through the library):
  --behavior B          succeed | fail | silent | die (default succeed)
  --token N             bootstrap token sent with success (default 0)
  --spec-candidates L   spec candidate ids sent with success, e.g. 11,12
  --delay D             hold each answer back, e.g. 50ms (default 0)
  --quiet               do not print each error a rank finds

Announcing (make run):
  --announce DIR        write DIR/p<TP>-<port>.prefill (bootstrap address,
                        prefill layout, with -f the decode layout the bytes
                        are checked for) and remove it on exit: ` + "`make run`" + `
                        drives rooms to every instance announced in
                        bin/local-prefills (docs/local-control-plane.md)

Examples:
  prefill-peer -f config/samples/pd_v1alpha1_pdpair_gqa_p8_d4.yaml
  prefill-peer --tp 8 --kv-item-lens 80x256,80x256 --kv-unit-lens 160x256 --bootstrap-port 0
  prefill-peer -f config/samples/pd_v1alpha1_pdpair_gqa_p8_d4.yaml --register-with http://127.0.0.1:8998
`

type options struct {
	cfg   prefillpeer.Config
	quiet bool
	// announce is the --announce directory; decode the decode layout the
	// -f manifest names ("tp=4,dp=1"; empty without -f).
	announce, decode string
}

// parseFlags returns the options, or an exit code ≥ 0 when run must stop.
func parseFlags(args []string, stdout, stderr io.Writer) (options, int) {
	fs := flag.NewFlagSet("prefill-peer", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		file, name, behavior, spec, host   string
		kvItems, kvUnits, stItems, stUnits string
		contract, registerWith, announceTo string
		tp, dp, port                       int
		token                              int64
		mla, quiet, checkTransfers         bool
		delay                              time.Duration
	)
	fs.StringVar(&file, "f", "", "")
	fs.StringVar(&name, "name", "", "")
	fs.IntVar(&tp, "tp", 0, "")
	fs.IntVar(&dp, "dp", 1, "")
	fs.BoolVar(&mla, "mla-l15", false, "")
	fs.StringVar(&kvItems, "kv-item-lens", "", "")
	fs.StringVar(&kvUnits, "kv-unit-lens", "", "")
	fs.StringVar(&stItems, "state-item-lens", "", "")
	fs.StringVar(&stUnits, "state-unit-lens", "", "")
	fs.StringVar(&host, "host", "127.0.0.1", "")
	fs.IntVar(&port, "bootstrap-port", 8998, "")
	fs.StringVar(&behavior, "behavior", "succeed", "")
	fs.Int64Var(&token, "token", 0, "")
	fs.StringVar(&spec, "spec-candidates", "", "")
	fs.DurationVar(&delay, "delay", 0, "")
	fs.BoolVar(&quiet, "quiet", false, "")
	fs.BoolVar(&checkTransfers, "check-transfers", false, "")
	fs.StringVar(&contract, "contract", "", "")
	fs.StringVar(&registerWith, "register-with", "", "")
	fs.StringVar(&announceTo, "announce", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return options{}, exitOK
		}
		return usageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "unexpected arguments: "+strings.Join(fs.Args(), " "))
	}

	var cfg prefillpeer.Config
	decode := ""
	switch {
	case file != "" && (tp != 0 || kvItems != "" || stItems != "" || mla):
		return usageError(stderr, "-f and the layout flags (--tp, --kv-item-lens, …) exclude each other")
	case file == "" && checkTransfers:
		return usageError(stderr, "--check-transfers needs -f: the decode side's layout comes from the PDPair")
	case contract != "" && (file != "" || kvItems != "" || kvUnits != "" || stItems != "" || stUnits != "" || mla):
		return usageError(stderr, "--contract replaces -f and the buffer flags (--kv-item-lens, --mla-l15, …): give --tp, --dp and the contract")
	case contract != "":
		raw, err := os.ReadFile(contract)
		if err != nil {
			return usageError(stderr, "--contract: "+err.Error())
		}
		if tp < 1 {
			return usageError(stderr, "--contract needs --tp N, the prefill world size")
		}
		cfg = prefillpeer.Config{Wire: kvwire.WireCacheContract, WorldSize: tp, DPSize: dp, Contract: raw}
	case file != "":
		c, l, d, err := configFromManifest(file, name)
		if err != nil {
			return usageError(stderr, err.Error())
		}
		cfg, decode = c, d
		if checkTransfers {
			cfg.Transfer = &l
		}
	default:
		if tp < 1 {
			return usageError(stderr, "give -f FILE or --tp N with the buffer lengths")
		}
		cfg = prefillpeer.Config{WorldSize: tp, DPSize: dp, EnableMLAL15Cache: mla}
		lists := []struct {
			flag, value string
			dst         *[]int64
		}{
			{"--kv-item-lens", kvItems, &cfg.Buffers.KVItemLens}, {"--kv-unit-lens", kvUnits, &cfg.Buffers.KVUnitLens},
			{"--state-item-lens", stItems, &cfg.Buffers.StateItemLens}, {"--state-unit-lens", stUnits, &cfg.Buffers.StateUnitLens},
		}
		for _, l := range lists {
			v, err := parseList(l.value)
			if err != nil {
				return usageError(stderr, l.flag+": "+err.Error())
			}
			*l.dst = v
		}
	}
	cfg.Host, cfg.BootstrapPort = host, port
	if registerWith != "" {
		if flagSet(fs, "bootstrap-port") {
			return usageError(stderr, "--register-with and --bootstrap-port exclude each other: a peer registering with another server runs none")
		}
		hostPort, err := prefillpeer.ParseBootstrapURL(registerWith)
		if err != nil {
			return usageError(stderr, "--register-with: "+err.Error())
		}
		cfg.BootstrapPort, cfg.RegisterWith = 0, hostPort
	}

	b, err := parseBehavior(behavior, token, spec, delay)
	if err != nil {
		return usageError(stderr, err.Error())
	}
	cfg.Default = b
	return options{cfg: cfg, quiet: quiet, announce: announceTo, decode: decode}, -1
}

// flagSet reports whether the command line gave flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func usageError(stderr io.Writer, msg string) (options, int) {
	fmt.Fprintf(stderr, "prefill-peer: %s\nRun prefill-peer --help for usage.\n", msg)
	return options{}, exitUsage
}

// configFromManifest is the peer of the manifest's prefill side, the
// layout its transfers are checked against, and that layout's decode side
// ("tp=4,dp=1").
func configFromManifest(file, name string) (prefillpeer.Config, planv1.Layout, string, error) {
	pair, err := manifest.ReadPDPairFile(file, name)
	if err != nil {
		return prefillpeer.Config{}, planv1.Layout{}, "", err
	}
	l, err := tokenspeed.FromSpec(pair.Spec)
	if err != nil {
		return prefillpeer.Config{}, planv1.Layout{}, "", fmt.Errorf("%s: PDPair %s: %w", file, pair.Name, err)
	}
	d := pair.Spec.Decode
	return prefillpeer.ConfigFor(l), l, fmt.Sprintf("tp=%d,dp=%d", d.TensorParallelSize, d.DataParallel()), nil
}

// parseList reads "2048,80x256": comma-separated values, NxV repeating V.
func parseList(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	var out []int64
	for _, part := range strings.Split(s, ",") {
		count, value := "1", part
		if n, v, ok := strings.Cut(part, "x"); ok {
			count, value = n, v
		}
		n, err1 := strconv.Atoi(strings.TrimSpace(count))
		v, err2 := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err1 != nil || err2 != nil || n < 1 || n > 1<<16 || v < 1 {
			return nil, fmt.Errorf("%q is not a positive length or COUNTxLENGTH", part)
		}
		for range n {
			out = append(out, v)
		}
	}
	return out, nil
}

func parseBehavior(name string, token int64, spec string, delay time.Duration) (prefillpeer.Behavior, error) {
	var b prefillpeer.Behavior
	switch name {
	case "succeed":
		var ids []int32
		for _, part := range strings.Split(spec, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			v, err := strconv.ParseInt(part, 10, 32)
			if err != nil {
				return b, fmt.Errorf("--spec-candidates: %q is not a 32-bit integer", part)
			}
			ids = append(ids, int32(v))
		}
		if token < kvwire.NoBootstrapToken {
			return b, fmt.Errorf("--token %d: a token is a token id, or -1 for none", token)
		}
		b = prefillpeer.Success(token, ids...)
	case "fail":
		b = prefillpeer.Failure()
	case "silent":
		b = prefillpeer.Silence()
	case "die":
		b = prefillpeer.Death()
	default:
		return b, fmt.Errorf("--behavior %q: want succeed, fail, silent or die", name)
	}
	if delay < 0 {
		return b, fmt.Errorf("--delay %v is negative", delay)
	}
	return b.After(delay), nil
}

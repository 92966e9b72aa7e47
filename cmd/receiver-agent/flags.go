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
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// MaxRanksPerAgent bounds the engine ranks one agent serves: each rank
// holds a status socket, a ZMQ context with its I/O thread, a push pool
// and an engine socket. A decode pod hosts the ranks of one node (8 GPUs
// today); 64 leaves room without letting a typo start thousands.
const MaxRanksPerAgent = 64

// maxEngineRank bounds the rank numbers (the plan index's own bound).
const maxEngineRank = 1 << 16

// maxUnixPath is the longest unix socket path Linux accepts (sun_path
// is 108 bytes with its terminating NUL).
const maxUnixPath = 107

// options are the agent's command line.
type options struct {
	firstRank, rankCount int
	engineRank           int
	socketDir            string
	listen               string
	listenSet            bool
	statusHost           string
	statusAddr           string
	advertiseHost        string
	probeAddr            string
	probePort            int

	planFile, planDir  string
	planSealDir        string
	planPublicKeys     string
	planPDPair         string
	planMinGeneration  int64
	kubeconfig, pdpair string
	planResync         time.Duration
	printPlan          bool
	logLevel           string
	httpTimeout        time.Duration
	bootstrapTimeout   time.Duration
	waitingTimeout     time.Duration
	heartbeatInterval  time.Duration
	heartbeatMisses    int
	sendTimeout        time.Duration
	maxRooms           int
	streamQueueBytes   int
	streamWriteTimeout time.Duration
	memoryLimit        string
	curveKeys          string
	curve              *receiver.CurveKeys // read from curveKeys
	decodeLayoutText   string
	decodeLayout       *transferplan.Parallelism // parsed from decodeLayoutText

	// budget is derived from --memory-limit or the container (see budget.go).
	budget receiver.Budget
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("receiver-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.firstRank, "first-rank", -1, "first decode engine rank this agent serves")
	fs.IntVar(&o.rankCount, "rank-count", 1, fmt.Sprintf("how many consecutive engine ranks from --first-rank this agent serves (1..%d)", MaxRanksPerAgent))
	fs.IntVar(&o.engineRank, "engine-rank", -1, "single-rank mode: the one engine rank served (= --first-rank R --rank-count 1)")
	fs.StringVar(&o.socketDir, "socket-dir", "", "directory of the engine sockets: rank R's local API is <socket-dir>/rank-R.sock")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8941", "single-rank local API address instead of --socket-dir: loopback HOST:PORT or unix:PATH")
	fs.StringVar(&o.statusHost, "status-host", "", "IP every rank's status socket binds, on a free port each (default 127.0.0.1)")
	fs.StringVar(&o.statusAddr, "status-addr", "", "single-rank: IP:PORT the status socket binds (port 0: any free port)")
	fs.StringVar(&o.advertiseHost, "advertise-host", "", "IP prefill ranks send status to (default: the status host)")
	fs.StringVar(&o.probeAddr, "probe-addr", "", "HOST:PORT for /healthz, /readyz, /metrics and /v1/agent; off when empty (see --probe-port)")
	fs.IntVar(&o.probePort, "probe-port", 0, "serve the probe address on this port of the status host (the pod IP; IPv6 literals need no brackets); 0: --probe-addr decides")
	fs.StringVar(&o.planFile, "plan-file", "", "plan set JSON written by `pdtopo plan -o json`")
	fs.StringVar(&o.planDir, "plan-dir", "", "directory where the PDPair's plan ConfigMaps are projected")
	fs.StringVar(&o.planSealDir, "plan-seal-dir", "", "with --plan-dir: directory where the PDPair's seal Secret is mounted; only the index it names is loaded")
	fs.StringVar(&o.planPublicKeys, "plan-public-keys", "", "with --plan-dir or --pdpair: comma-separated base64 ed25519 public keys of the operator (the webhook passes them); only an index signed with one for --plan-pdpair is loaded")
	fs.StringVar(&o.planPDPair, "plan-pdpair", "", "with --plan-public-keys: NAMESPACE/NAME (or NAME, in $POD_NAMESPACE) of the PDPair the signed plans must be for (default with --pdpair: that pair)")
	fs.Int64Var(&o.planMinGeneration, "plan-min-generation", 0, "with --plan-public-keys: refuse plans signed for an older generation of the PDPair than this")
	fs.StringVar(&o.decodeLayoutText, "decode-layout", "", "the decode layout the pod was admitted under, tp=N,dp=M (the webhook passes it): only plans made for it are loaded, whatever the PDPair's spec says now")
	fs.StringVar(&o.pdpair, "pdpair", "", "read the plans from the API: NAMESPACE/NAME of the PDPair (or NAME, in $POD_NAMESPACE)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig for --pdpair (default: the in-cluster service account)")
	fs.DurationVar(&o.planResync, "plan-resync", time.Minute, "safety-net re-read of the plan source (changes are watched and apply at once)")
	fs.BoolVar(&o.printPlan, "print-plan", false, "print the plan JSON of each served rank (one line each) and exit")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.httpTimeout, "http-timeout", receiver.DefaultHTTPTimeout, "timeout of each call to a bootstrap server")
	fs.DurationVar(&o.bootstrapTimeout, "bootstrap-timeout", receiver.DefaultBootstrapTimeout, "longest a room may stay Bootstrapping")
	fs.DurationVar(&o.waitingTimeout, "waiting-timeout", receiver.DefaultWaitingTimeout, "longest a bootstrapped room may stay unfinished")
	fs.DurationVar(&o.heartbeatInterval, "heartbeat-interval", receiver.DefaultHeartbeatInterval, "bootstrap server health check interval (at least 2s)")
	fs.IntVar(&o.heartbeatMisses, "heartbeat-misses", receiver.DefaultHeartbeatMisses, "consecutive failed health checks that drop a prefill")
	fs.DurationVar(&o.sendTimeout, "send-timeout", receiver.DefaultSendTimeout, "longest a message waits for a prefill rank's full queue")
	fs.IntVar(&o.maxRooms, "max-rooms", 0, "most rooms open at once, per rank (0: derived from the memory limit)")
	fs.StringVar(&o.curveKeys, "curve-keys", "", "directory holding agent.key (the agent's CURVE secret key) and prefill.pub (the prefill's public key), e.g. a mounted Secret: turns on ZMQ CURVE with the prefill ranks")
	fs.StringVar(&o.memoryLimit, "memory-limit", "", "memory the agent may use, e.g. 512Mi (default: its container's cgroup limit); sizes the Go heap, rooms and queues")
	fs.IntVar(&o.streamQueueBytes, "stream-queue-bytes", localapi.DefaultStreamQueueBytes, "bytes of events an engine stream may hold unread before the agent drops them and resyncs the stream's rooms instead")
	fs.DurationVar(&o.streamWriteTimeout, "stream-write-timeout", localapi.DefaultStreamWriteTimeout, "longest an engine may leave its stream unread before the agent closes it (its rooms fail StreamStalled)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.listenSet = set["listen"]
	if err := o.ranks(set); err != nil {
		return nil, err
	}
	if err := o.parseDecodeLayout(); err != nil {
		return nil, err
	}
	return o, o.validate()
}

// ranks settles the rank range from --engine-rank or --first-rank and
// --rank-count.
func (o *options) ranks(set map[string]bool) error {
	switch {
	case set["engine-rank"] && (set["first-rank"] || set["rank-count"]):
		return errors.New("give either --engine-rank (one rank) or --first-rank with --rank-count, not both")
	case set["engine-rank"]:
		if o.engineRank < 0 {
			return fmt.Errorf("--engine-rank is %d; engine ranks are non-negative", o.engineRank)
		}
		o.firstRank, o.rankCount = o.engineRank, 1
	case !set["first-rank"]:
		return errors.New("give the engine ranks to serve: --first-rank F --rank-count N (or --engine-rank R for one)")
	}
	if o.firstRank < 0 {
		return fmt.Errorf("--first-rank is %d; engine ranks are non-negative", o.firstRank)
	}
	if o.rankCount < 1 || o.rankCount > MaxRanksPerAgent {
		return fmt.Errorf("--rank-count is %d; one agent serves 1 to %d ranks", o.rankCount, MaxRanksPerAgent)
	}
	if last := o.firstRank + o.rankCount - 1; last >= maxEngineRank {
		return fmt.Errorf("--first-rank %d with --rank-count %d ends at engine rank %d; engine ranks are below %d", o.firstRank, o.rankCount, last, maxEngineRank)
	}
	return nil
}

// engineRanks lists the served ranks in order.
func (o *options) engineRanks() []int {
	out := make([]int, o.rankCount)
	for i := range out {
		out[i] = o.firstRank + i
	}
	return out
}

// socketPath is rank's engine socket under --socket-dir.
func (o *options) socketPath(rank int) string {
	return filepath.Join(o.socketDir, "rank-"+strconv.Itoa(rank)+".sock")
}

// probeListenAddr is where the probe server binds: --probe-addr, or
// --probe-port on the status host; "" when neither is given.
func (o *options) probeListenAddr() string {
	if o.probePort == 0 {
		return o.probeAddr
	}
	return net.JoinHostPort(o.statusBindHost(), strconv.Itoa(o.probePort))
}

// statusBindHost is --status-host, default loopback.
func (o *options) statusBindHost() string {
	if o.statusHost == "" {
		return "127.0.0.1"
	}
	return o.statusHost
}

// validateAdvertised refuses an IPv6 address as the one prefill ranks send
// status to: the v1 wire carries it as decode_ip, which the reference
// prefill cuts at the first ':' (pkg/kvwire's checkDecodeIP), so every
// status would go to the wrong host. Saying so at start beats rooms that
// never finish.
func (o *options) validateAdvertised() error {
	flagName, host := "--advertise-host", o.advertiseHost
	if host == "" {
		flagName, host = "--status-host", o.statusHost
	}
	if host == "" && o.statusAddr != "" {
		flagName = "--status-addr"
		host, _, _ = net.SplitHostPort(o.statusAddr)
	}
	if ip := net.ParseIP(host); ip != nil && strings.Contains(host, ":") {
		return fmt.Errorf("%s %s is an IPv6 address; the v1 KV wire sends decode_ip as text that the prefill cuts at ':', so "+
			"prefill ranks could not answer it: give decode pods an IPv4 address (on dual-stack clusters, IPv4 as the primary pod IP)", flagName, host)
	}
	return nil
}

// statusAddrFor is where rank's status socket binds.
func (o *options) statusAddrFor(int) string {
	if o.statusAddr != "" {
		return o.statusAddr
	}
	return net.JoinHostPort(o.statusBindHost(), "0")
}

func (o *options) validate() error {
	sources := 0
	for _, set := range []bool{o.planFile != "", o.planDir != "", o.pdpair != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return errors.New("give exactly one plan source: --plan-file, --plan-dir, or --pdpair (with --kubeconfig outside a cluster)")
	}
	if o.kubeconfig != "" && o.pdpair == "" {
		return errors.New("--kubeconfig is only used with --pdpair")
	}
	if o.planSealDir != "" && o.planDir == "" {
		return errors.New("--plan-seal-dir is only used with --plan-dir")
	}
	if err := o.validateSigned(); err != nil {
		return err
	}
	if err := o.validateAddresses(); err != nil {
		return err
	}
	if o.planResync <= 0 {
		return errors.New("--plan-resync must be positive")
	}
	for name, d := range map[string]time.Duration{"--http-timeout": o.httpTimeout, "--bootstrap-timeout": o.bootstrapTimeout, "--waiting-timeout": o.waitingTimeout, "--heartbeat-interval": o.heartbeatInterval, "--send-timeout": o.sendTimeout, "--stream-write-timeout": o.streamWriteTimeout} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive", name)
		}
	}
	if o.heartbeatMisses < 1 {
		return errors.New("--heartbeat-misses must be at least 1")
	}
	if o.maxRooms < 0 {
		return fmt.Errorf("--max-rooms is %d; give a positive number, or 0 to derive it from the memory limit", o.maxRooms)
	}
	if o.streamQueueBytes < 4096 {
		return fmt.Errorf("--stream-queue-bytes is %d; give at least 4096 (a few room events)", o.streamQueueBytes)
	}
	return nil
}

func (o *options) validateAddresses() error {
	switch {
	case o.socketDir != "" && o.listenSet:
		return errors.New("give either --socket-dir (one socket per rank) or --listen (one rank), not both")
	case o.socketDir == "" && o.rankCount > 1:
		return fmt.Errorf("--rank-count %d needs --socket-dir: each rank has its own engine socket", o.rankCount)
	case o.statusAddr != "" && o.statusHost != "":
		return errors.New("give either --status-host or --status-addr, not both")
	}
	if o.statusAddr != "" && o.rankCount > 1 {
		if _, port, err := net.SplitHostPort(o.statusAddr); err != nil || port != "0" {
			return fmt.Errorf("--status-addr %q names one port but --rank-count is %d: use --status-host (each rank binds a free port)", o.statusAddr, o.rankCount)
		}
	}
	if o.statusHost != "" && net.ParseIP(o.statusHost) == nil {
		return fmt.Errorf("--status-host %q is not an IP address", o.statusHost)
	}
	if err := o.validateAdvertised(); err != nil {
		return err
	}
	switch {
	case o.probePort != 0 && o.probeAddr != "":
		return errors.New("give either --probe-addr or --probe-port, not both")
	case o.probePort < 0 || o.probePort > 65535:
		return fmt.Errorf("--probe-port %d is not a TCP port (1..65535, or 0 for none)", o.probePort)
	}
	if o.socketDir != "" {
		if p := o.socketPath(o.firstRank + o.rankCount - 1); len(p) > maxUnixPath {
			return fmt.Errorf("--socket-dir %q makes socket paths of %d bytes (%s); unix sockets allow %d", o.socketDir, len(p), p, maxUnixPath)
		}
	}
	return nil
}

// parseDecodeLayout reads --decode-layout and checks that the served ranks
// exist in it: ranks past its TP would never get a plan.
func (o *options) parseDecodeLayout() error {
	if o.decodeLayoutText == "" {
		return nil
	}
	if o.planFile != "" {
		return errors.New("--decode-layout is read with --plan-dir or --pdpair, whose publications can hold several layouts; a --plan-file holds one")
	}
	p, err := transferplan.ParseParallelism(o.decodeLayoutText)
	if err != nil {
		return fmt.Errorf("--decode-layout: %w", err)
	}
	if last := o.firstRank + o.rankCount - 1; last >= p.TPSize {
		return fmt.Errorf("--decode-layout %s has engine ranks 0..%d but the agent serves engine ranks %d..%d (--first-rank %d, --rank-count %d)",
			p, p.TPSize-1, o.firstRank, last, o.firstRank, o.rankCount)
	}
	o.decodeLayout = &p
	return nil
}

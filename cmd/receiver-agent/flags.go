package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// options are the agent's command line.
type options struct {
	engineRank    int
	statusAddr    string
	advertiseHost string
	listen        string

	planFile, planDir  string
	kubeconfig, pdpair string
	planPollInterval   time.Duration
	printPlan          bool
	logLevel           string
	httpTimeout        time.Duration
	bootstrapTimeout   time.Duration
	waitingTimeout     time.Duration
	heartbeatInterval  time.Duration
	heartbeatMisses    int
	sendTimeout        time.Duration
	maxRooms           int
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("receiver-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&o.engineRank, "engine-rank", -1, "decode engine rank this agent serves (required)")
	fs.StringVar(&o.statusAddr, "status-addr", "127.0.0.1:0", "IP:PORT the status socket binds (port 0: any free port)")
	fs.StringVar(&o.advertiseHost, "advertise-host", "", "IP prefill ranks send status to (default: the status-addr IP)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8941", "local API address: loopback HOST:PORT or unix:PATH")
	fs.StringVar(&o.planFile, "plan-file", "", "plan set JSON written by `pdtopo plan -o json`")
	fs.StringVar(&o.planDir, "plan-dir", "", "directory where the PDPair's plan ConfigMaps are projected")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig to read the plans from the API (with --pdpair)")
	fs.StringVar(&o.pdpair, "pdpair", "", "NAMESPACE/NAME of the PDPair whose plans to read (with --kubeconfig)")
	fs.DurationVar(&o.planPollInterval, "plan-poll-interval", 5*time.Second, "how often the plan source is checked for updates")
	fs.BoolVar(&o.printPlan, "print-plan", false, "print this rank's plan JSON and exit")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&o.httpTimeout, "http-timeout", receiver.DefaultHTTPTimeout, "timeout of each call to a bootstrap server")
	fs.DurationVar(&o.bootstrapTimeout, "bootstrap-timeout", receiver.DefaultBootstrapTimeout, "longest a room may stay Bootstrapping")
	fs.DurationVar(&o.waitingTimeout, "waiting-timeout", receiver.DefaultWaitingTimeout, "longest a bootstrapped room may stay unfinished")
	fs.DurationVar(&o.heartbeatInterval, "heartbeat-interval", receiver.DefaultHeartbeatInterval, "bootstrap server health check interval (at least 2s)")
	fs.IntVar(&o.heartbeatMisses, "heartbeat-misses", receiver.DefaultHeartbeatMisses, "consecutive failed health checks that drop a prefill")
	fs.DurationVar(&o.sendTimeout, "send-timeout", receiver.DefaultSendTimeout, "longest a message waits for a prefill rank's full queue")
	fs.IntVar(&o.maxRooms, "max-rooms", receiver.DefaultMaxRooms, "most rooms open at once")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, o.validate()
}

func (o *options) validate() error {
	if o.engineRank < 0 {
		return errors.New("--engine-rank is required and must be non-negative")
	}
	sources := 0
	for _, set := range []bool{o.planFile != "", o.planDir != "", o.kubeconfig != "" || o.pdpair != ""} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return errors.New("give exactly one plan source: --plan-file, --plan-dir, or --kubeconfig with --pdpair")
	}
	if (o.kubeconfig == "") != (o.pdpair == "") {
		return errors.New("--kubeconfig and --pdpair go together")
	}
	if o.planPollInterval <= 0 {
		return errors.New("--plan-poll-interval must be positive")
	}
	for name, d := range map[string]time.Duration{"--http-timeout": o.httpTimeout, "--bootstrap-timeout": o.bootstrapTimeout, "--waiting-timeout": o.waitingTimeout, "--heartbeat-interval": o.heartbeatInterval, "--send-timeout": o.sendTimeout} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive", name)
		}
	}
	if o.heartbeatMisses < 1 || o.maxRooms < 1 {
		return errors.New("--heartbeat-misses and --max-rooms must be at least 1")
	}
	return nil
}

// Command receiver-agent runs the decode side of the prefill/decode KV
// handshake for one decode engine rank: it loads the rank's route plan,
// binds the status socket, and serves the engine a local HTTP/JSON API to
// open, request, poll and clear rooms (see pkg/receiver and its localapi).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
)

func main() {
	receiver.UseAgentGCPercent()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "receiver-agent:", err)
		os.Exit(1)
	}
}

// run is the whole agent; it returns when ctx ends or setup fails.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(o.logLevel, stderr)
	if err != nil {
		return err
	}
	src, err := planSource(o)
	if err != nil {
		return err
	}
	loaded, loadErr := plansource.Load(ctx, src)
	if o.printPlan {
		if loadErr != nil {
			return fmt.Errorf("%s: %w", src.Describe(), loadErr)
		}
		return printPlan(stdout, loaded.Snapshot)
	}
	if loadErr != nil {
		if o.planFile != "" {
			return fmt.Errorf("%s: %w", src.Describe(), loadErr)
		}
		// ConfigMaps may be published after the pod starts: not ready until then
		log.Warn("no plan yet; retrying", "source", src.Describe(), "error", loadErr)
	}
	return serve(ctx, o, log, src, loaded, loadErr == nil)
}

func serve(ctx context.Context, o *options, log *slog.Logger, src plansource.Source, loaded plansource.Loaded, havePlan bool) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var first *receiver.PlanSnapshot
	if havePlan {
		first = &loaded.Snapshot
	}
	m, err := receiver.New(agentConfig(o, log, receiver.NewMetrics(reg)), first)
	if err != nil {
		return err
	}
	defer m.Close()
	ln, err := listen(o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           localapi.Handler(m, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})),
		ReadHeaderTimeout: 10 * time.Second,
		Protocols:         localapi.ServerProtocols(),
	}
	go plansource.Watch(ctx, src, o.planPollInterval, loaded, m.SetPlan, log)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("local API listening", "addr", ln.Addr().String(), "statusAddr", m.StatusAddr())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func agentConfig(o *options, log *slog.Logger, metrics *receiver.Metrics) receiver.Config {
	return receiver.Config{
		EngineRank: o.engineRank, StatusAddr: o.statusAddr, AdvertiseHost: o.advertiseHost,
		HTTPTimeout: o.httpTimeout, BootstrapTimeout: o.bootstrapTimeout, WaitingTimeout: o.waitingTimeout,
		HeartbeatInterval: o.heartbeatInterval, HeartbeatMisses: o.heartbeatMisses,
		SendTimeout: o.sendTimeout, MaxRooms: o.maxRooms, Logger: log, Metrics: metrics,
	}
}

func planSource(o *options) (plansource.Source, error) {
	switch {
	case o.planFile != "":
		return plansource.File{Path: o.planFile, EngineRank: o.engineRank}, nil
	case o.planDir != "":
		return plansource.Dir{Path: o.planDir, EngineRank: o.engineRank}, nil
	default:
		return plansource.NewAPI(o.kubeconfig, o.pdpair, o.engineRank)
	}
}

// printPlan writes the rank's plan as canonical (encoding/json) JSON.
func printPlan(w io.Writer, snap receiver.PlanSnapshot) error {
	b, err := json.Marshal(snap.Plan)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %v", level, err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

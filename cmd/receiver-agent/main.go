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

// Command receiver-agent runs the decode side of the prefill/decode KV
// handshake for the engine ranks of one decode pod: it loads each rank's
// route plan, binds a status socket per rank, serves each rank's engine a
// local HTTP/JSON API on its own unix socket (open, request, poll and
// clear rooms; see pkg/receiver and its localapi), and answers probes,
// metrics and /v1/agent on the probe address.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pdtopo/pdtopo/internal/version"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/receiver/localapi"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
)

func main() {
	if version.Handle("receiver-agent", os.Args[1:], os.Stdout) {
		return
	}
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
		if loadErr == nil {
			loadErr = checkPlans(o.engineRanks(), loaded.Plans)
		}
		if loadErr != nil {
			return fmt.Errorf("%s: %w", src.Describe(), loadErr)
		}
		return printPlans(stdout, loaded.Plans)
	}
	if loadErr != nil && o.planFile != "" {
		return fmt.Errorf("%s: %w", src.Describe(), loadErr)
	}
	return serve(ctx, o, log, src, loaded, loadErr)
}

func serve(ctx context.Context, o *options, log *slog.Logger, src plansource.Source, loaded plansource.Loaded, loadErr error) error {
	restoreMemoryLimit, err := applyBudget(o, log)
	if err != nil {
		return err
	}
	defer restoreMemoryLimit()
	if err := o.loadCurveKeys(); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	ranks, err := startRanks(o, log, reg, metrics)
	if err != nil {
		return err
	}
	plans := newPlanState(o.engineRanks(), managers(ranks), reg)
	plans.decodeLayout = o.decodeLayout
	plans.log = log
	if loadErr == nil {
		plans.sets(loaded.Plans)
		if loadErr = plans.apply(loaded.Plans); loadErr != nil && o.planFile != "" {
			closeRanks(ranks)
			return fmt.Errorf("%s: %w", src.Describe(), loadErr)
		}
	}
	if loadErr != nil {
		// ConfigMaps may be published (or fixed) after the pod starts: not
		// ready until then, rather than restarting in a loop
		log.Warn("no plan yet; waiting for the plan source", "source", src.Describe(), "error", loadErr)
		loaded = plansource.Loaded{}
	}
	plans.report(loadErr)

	servers := make([]*http.Server, 0, len(ranks)+1)
	errc := make(chan error, 2*len(ranks)+1)
	quit := make(chan struct{})
	defer close(quit)
	for _, rs := range ranks {
		servers = append(servers, rs.srv)
		go func() { errc <- rs.srv.Serve(rs.ln) }()
		go func() { // AuthFailure is nil (never ready) with CURVE off
			select {
			case err := <-rs.m.AuthFailure():
				log.Error("exiting: CURVE peers can no longer be authenticated", "engineRank", rs.rank, "error", err)
				errc <- err
			case <-quit:
			}
		}()
		log.Info("engine API listening", "engineRank", rs.rank, "addr", rs.ln.Addr().String(), "statusAddr", rs.m.StatusAddr())
	}
	if addr := o.probeListenAddr(); addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			closeRanks(ranks)
			return fmt.Errorf("probe address %s: %w", addr, err)
		}
		probe := probeServer(localapi.ProbeHandler(plans, metrics))
		servers = append(servers, probe)
		limited := newLimitListener(ln, probeMaxConns, probeMaxConnsPerSource, reg)
		go func() { errc <- probe.Serve(limited) }()
		log.Info("probe address listening", "addr", ln.Addr().String())
	}

	follow, stopFollow := context.WithCancel(ctx)
	defer stopFollow()
	f := &plansource.Follower{Source: src, Resync: o.planResync, Apply: plans.apply, Report: plans.report, Failed: plans.failed, Sets: plans.sets, Log: log}
	go f.Run(follow, loaded)

	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	stopFollow()
	// Fail unfinished rooms first, so engines in a long poll get their answer
	// before the servers stop taking connections; then let the answers drain.
	for _, rs := range ranks {
		rs.m.Close()
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, rs := range ranks { // the streams' last events: their rooms' Shutdown, then a closed line
		_ = rs.api.WaitStreams(shutdown)
	}
	for _, s := range servers {
		if err := s.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) && serveErr == nil {
			serveErr = err
		}
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		return nil
	}
	return serveErr
}

func planSource(o *options) (plansource.Source, error) {
	ranks := o.engineRanks()
	switch {
	case o.planFile != "":
		return plansource.File{Path: o.planFile, EngineRanks: ranks}, nil
	case o.planDir != "":
		signed, err := o.signed()
		if err != nil {
			return nil, err
		}
		return plansource.Dir{Path: o.planDir, SealDir: o.planSealDir, Signed: signed, EngineRanks: ranks, DecodeLayout: o.decodeLayout}, nil
	default:
		signed, err := o.signed()
		if err != nil {
			return nil, err
		}
		src, err := plansource.NewAPI(o.kubeconfig, o.pdpair, ranks)
		if err == nil {
			src.DecodeLayout, src.Signed = o.decodeLayout, signed
		}
		return src, err
	}
}

// checkPlans refuses plans no rank would run (see receiver.PlanSnapshot.Check).
func checkPlans(ranks []int, p plansource.Plans) error {
	var errs []error
	for k, set := range p.Sets() {
		for i, snap := range set {
			if err := snap.Check(ranks[i]); err != nil {
				errs = append(errs, fmt.Errorf("%sengine rank %d: %w", setName(k), ranks[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// setName names an alternate plan set in an error ("" for the current one).
func setName(k int) string {
	if k == 0 {
		return ""
	}
	return fmt.Sprintf("plan set %d, ", k)
}

// printPlans writes each rank's plan as canonical (encoding/json) JSON,
// one line per rank in rank order.
func printPlans(w io.Writer, p plansource.Plans) error {
	for _, snap := range p.Ranks {
		b, err := json.Marshal(snap.Plan)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return err
		}
	}
	return nil
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %v", level, err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

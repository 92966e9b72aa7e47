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

package localcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/controlplane"
)

// RolloutOptions is the rollout scenario (`make rollout-demo`): the local
// control plane of Options, without the samples, and the pair and decode
// pod it rolls.
type RolloutOptions struct {
	Options
	// PairFile is a v1-wire PDPair of prefill TP 8 × decode TP 4
	// described by its model (config/samples/pd_v1alpha1_pdpair_gqa_p8_d4.yaml),
	// so that every layout the scenario edits to is planned from the model.
	PairFile string
	// PodFile is the decode pod of that pair (config/samples/decode/pod.yaml);
	// the new template's pod is a copy with --tp-size=2.
	PodFile string
	// RoomsPerStep is how many rooms each prefill instance sends each
	// decode pod in a step, at least (default 10, one every 200 ms).
	RoomsPerStep int64
	// Hold keeps everything running after the summary (rooms included)
	// until ctx ends, for a look with kubectl.
	Hold bool
	// Out receives the scenario's story and summary.
	Out io.Writer
}

// RolloutReport is what the scenario saw.
type RolloutReport struct {
	Steps []RolloutStep
	// Rooms are the final counts, per prefill instance and decode pod.
	Rooms []RoomCount
	// Problems are the expectations not met; none means the rollout passed.
	Problems []string
	Runtime  time.Duration
}

// RolloutStep is the pair's status and the rooms at the end of a step.
type RolloutStep struct {
	Name        string
	Generations []string
	// RolloutCompatible and PlansPublished are the conditions' lines.
	RolloutCompatible, PlansPublished string
	Rooms                             []RoomCount
}

// Rollout runs the scenario: a local control plane, one pair, a prefill
// rollout (P8 → P4) and a decode rollout (TP 4 → TP 2) under traffic,
// then the old instances gone. It returns the report and an error when the
// scenario could not run or an expectation was not met.
func Rollout(ctx context.Context, o RolloutOptions) (*RolloutReport, error) {
	began := time.Now()
	r, err := newRollout(ctx, o)
	if err != nil {
		return nil, err
	}
	defer func() { r.stop() }()
	report := &RolloutReport{}
	r.report = report
	for _, step := range []func(context.Context) error{r.stepA, r.stepB, r.stepC, r.stepD} {
		if err = step(ctx); err != nil {
			report.Problems = append(report.Problems, err.Error())
			break
		}
	}
	report.Rooms = r.counts()
	report.Problems = append(report.Problems, roomProblems(report.Rooms)...)
	report.Runtime = time.Since(began)
	r.printSummary(report)
	if o.Hold && ctx.Err() == nil {
		r.printf("holding: the control plane, the agents, the prefill peers and the rooms keep running; Ctrl-C stops them.\n"+
			"  from another terminal: bin/kubectl --kubeconfig %s get pdp %s -o yaml\n", r.o.KubeconfigPath, r.key.Name)
		<-ctx.Done()
	}
	if len(report.Problems) > 0 {
		return report, fmt.Errorf("rollout: %d problems:\n  %s", len(report.Problems), strings.Join(report.Problems, "\n  "))
	}
	return report, nil
}

// rollout is the scenario's state.
type rollout struct {
	o       RolloutOptions
	s       *Session
	key     client.ObjectKey
	dir     string // the peers' manifests
	peers   []*controlplane.Process
	byLabel map[string]*controlplane.Process
	old     *decodeInstance
	neu     *decodeInstance
	report  *RolloutReport
}

// decodeInstance is one admitted decode pod, its agent and its rooms.
type decodeInstance struct {
	agent  *podAgent
	driver *podDriver
}

func (o RolloutOptions) withDefaults() RolloutOptions {
	if o.PairFile == "" {
		o.PairFile = filepath.Join("config", "samples", "pd_v1alpha1_pdpair_gqa_p8_d4.yaml")
	}
	if o.PodFile == "" {
		o.PodFile = filepath.Join("config", "samples", "decode", "pod.yaml")
	}
	if o.RoomsPerStep <= 0 {
		o.RoomsPerStep = 10
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Progress == nil {
		o.Progress = o.Out
	}
	o.NoSamples, o.SamplesDir, o.DecodePodFiles = true, "", nil
	o.Options = o.Options.withDefaults()
	return o
}

func newRollout(ctx context.Context, o RolloutOptions) (*rollout, error) {
	o = o.withDefaults()
	var errs []error
	for _, f := range []string{o.PairFile, o.PodFile} {
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, err)
		}
	}
	if o.ManagerPath == "" || o.AgentPath == "" || o.PeerPath == "" {
		errs = append(errs, errors.New("the rollout needs the manager, the receiver agent and the prefill peer"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s, err := Start(ctx, o.Options)
	if err != nil {
		return nil, err
	}
	r := &rollout{o: o, s: s, byLabel: map[string]*controlplane.Process{}}
	if r.dir, err = os.MkdirTemp("", "pdtopo-rollout-"); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return r, nil
}

// stop ends the rooms, the agents and the peers, then the control plane.
func (r *rollout) stop() {
	var errs []error
	for _, d := range []*decodeInstance{r.old, r.neu} {
		if d != nil {
			d.driver.stop()
			errs = append(errs, d.agent.stop(r.o.StopTimeout))
		}
	}
	for _, p := range r.peers {
		errs = append(errs, p.Stop(r.o.StopTimeout))
	}
	errs = append(errs, os.RemoveAll(r.dir), r.s.Stop())
	if err := errors.Join(errs...); err != nil {
		r.printf("stopping: %v\n", err)
	}
}

func (r *rollout) printf(format string, args ...any) {
	fmt.Fprintf(r.o.Out, format, args...)
}

// counts are every pod's rooms so far.
func (r *rollout) counts() []RoomCount {
	var out []RoomCount
	for _, d := range []*decodeInstance{r.old, r.neu} {
		if d != nil {
			out = append(out, d.driver.Counts()...)
		}
	}
	return out
}

// snapshot records the pair's status and the rooms at the end of a step,
// and prints them.
func (r *rollout) snapshot(ctx context.Context, name string) error {
	var p pdv1.PDPair
	if err := r.s.Client().Get(ctx, r.key, &p); err != nil {
		return err
	}
	step := RolloutStep{Name: name, Generations: GenerationNames(&p), Rooms: r.counts(),
		RolloutCompatible: conditionLine(&p, pdv1.PDPairRolloutCompatible), PlansPublished: conditionLine(&p, pdv1.PDPairPlansPublished)}
	r.report.Steps = append(r.report.Steps, step)
	r.printf("status at the end of %s (kubectl get pdp %s -o yaml):\n%s", name, r.key.Name, StatusText(&p))
	r.printf("rooms so far (prefill instance → decode pod):\n%s\n", roomTable(step.Rooms))
	return nil
}

// roomProblems are the rooms that ended otherwise than their target wants.
func roomProblems(rooms []RoomCount) []string {
	var out []string
	for _, c := range rooms {
		switch {
		case c.Bad() > 0:
			out = append(out, fmt.Sprintf("%s → %s (%s): %d of %d rooms did not end in %s: %s", c.Prefill, c.Pod, c.Decode, c.Bad(), c.Rooms(), c.Expect, strings.Join(failures(c), "; ")))
		case c.Expect != "ok" && c.Refused == 0:
			out = append(out, fmt.Sprintf("%s → %s (%s): no room was refused with %s", c.Prefill, c.Pod, c.Decode, c.Expect))
		case c.Rooms() == 0:
			out = append(out, fmt.Sprintf("%s → %s (%s): no room ended", c.Prefill, c.Pod, c.Decode))
		}
	}
	return out
}

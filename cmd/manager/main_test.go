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
	"strings"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func TestParseFlagsDefaults(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.metricsAddr != ":8080" || o.probeAddr != ":8081" || o.leaderElect || o.leaderElectionID != "pdtopo-manager.pd.pdtopo.dev" || o.concurrency != 4 {
		t.Fatalf("defaults = %+v", o)
	}
	if o.budget != transferplan.DefaultBudget {
		t.Fatalf("plan budget %+v, want the default %+v", o.budget, transferplan.DefaultBudget)
	}
}

func TestParseFlagsPlanBudget(t *testing.T) {
	o, err := parseFlags([]string{"--max-plan-fragments=1000000", "--max-plan-bytes=0", "--max-rank-plan-bytes=1024"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (transferplan.Budget{MaxFragments: 1000000, MaxPlanBytes: 0, MaxRankPlanBytes: 1024}); o.budget != want {
		t.Fatalf("budget %+v, want %+v", o.budget, want)
	}
	if _, err := parseFlags([]string{"--max-plan-fragments=-5"}); err == nil || !strings.Contains(err.Error(), "--max-plan-fragments") {
		t.Fatalf("negative budget: %v", err)
	}
}

func TestParseFlagsAsDeployed(t *testing.T) {
	// config/manager/manager.yaml passes these.
	o, err := parseFlags([]string{"--leader-elect", "--metrics-bind-address=:9090", "--health-probe-bind-address=:9091",
		"--leader-election-namespace=pdtopo-system", "--zap-log-level=debug", "--kubeconfig=/k"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.leaderElect || o.metricsAddr != ":9090" || o.probeAddr != ":9091" || o.leaderElectionNamespace != "pdtopo-system" || o.kubeconfig != "/k" {
		t.Fatalf("parsed = %+v", o)
	}
}

func TestParseFlagsRejectsZeroConcurrency(t *testing.T) {
	_, err := parseFlags([]string{"--max-concurrent-reconciles=0"})
	if err == nil || !strings.Contains(err.Error(), "at least 1, got 0") {
		t.Fatalf("error = %v", err)
	}
}

func TestWebhookFlags(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.webhook.certs != webhookCertsNone {
		t.Fatalf("webhook certs default %q: a manager run without flags must not need certificates", o.webhook.certs)
	}
	// config/manager/manager.yaml passes these.
	o, err = parseFlags([]string{"--webhook-certs=rotate", "--webhook-namespace=pdtopo-system", "--agent-image=registry/agent:v1",
		"--mutating-webhook-configurations=a, b", "--validating-webhook-configurations="})
	if err != nil {
		t.Fatal(err)
	}
	infos := webhookInfos(o.webhook)
	if o.agentSidecar.Image != "registry/agent:v1" || len(infos) != 2 || infos[0].Name != "a" || infos[1].Name != "b" {
		t.Fatalf("parsed %+v, webhooks %+v", o, infos)
	}
	for args, want := range map[string]string{
		"--webhook-certs=cert-manager": `--webhook-certs must be rotate, files or none, got "cert-manager"`,
		"--webhook-port=70000":         "--webhook-port must be a TCP port, got 70000",
	} {
		if _, err := parseFlags([]string{args}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
	t.Setenv("POD_NAMESPACE", "")
	if _, err := parseFlags([]string{"--webhook-certs=files", "--agent-image="}); err == nil || !strings.Contains(err.Error(), "--agent-image") {
		t.Errorf("an empty --agent-image with webhooks on: error %v", err)
	}
}

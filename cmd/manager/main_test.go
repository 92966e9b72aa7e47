package main

import (
	"strings"
	"testing"
)

func TestParseFlagsDefaults(t *testing.T) {
	o, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.metricsAddr != ":8080" || o.probeAddr != ":8081" || o.leaderElect || o.leaderElectionID != "pdtopo-manager.pd.pdtopo.dev" || o.concurrency != 4 {
		t.Fatalf("defaults = %+v", o)
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

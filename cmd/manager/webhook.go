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
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// How the webhook server gets its serving certificate (--webhook-certs).
const (
	// webhookCertsNone serves no admission webhooks.
	webhookCertsNone = "none"
	// webhookCertsFiles serves with tls.crt/tls.key from --webhook-cert-dir,
	// written by someone else (cert-manager's Secret mounted there, or the
	// local CA of `make run`); the server reloads them when they change.
	webhookCertsFiles = "files"
	// webhookCertsRotate makes and rotates its own CA and serving certificate
	// in a Secret, mounted at --webhook-cert-dir, and writes the CA into the
	// webhook configurations (as LeaderWorkerSet and JobSet do).
	webhookCertsRotate = "rotate"
)

// The rotator reads and updates its Secret (in the manager's namespace only)
// and writes the CA bundle into the two webhook configurations config/
// deploys, by name: it reads and watches them through a field selector on
// their names (webhookConfigsByName), which is what lets the RBAC name them.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=pdtopo-mutating-webhook-configuration,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=pdtopo-validating-webhook-configuration,verbs=get;list;watch;update

// webhookOptions are the webhook server's flags.
type webhookOptions struct {
	certs       string
	host        string
	port        int
	certDir     string
	namespace   string
	secretName  string
	serviceName string
	// configurations are the webhook configurations whose caBundle the
	// rotator keeps current (one flag per kind).
	mutatingConfigs, validatingConfigs string
}

func (w *webhookOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&w.certs, "webhook-certs", webhookCertsNone,
		"serving certificates of the admission webhooks: rotate (self-managed in a Secret), files (from --webhook-cert-dir), or none (serve no webhooks)")
	fs.StringVar(&w.host, "webhook-host", "", "address the webhook server binds (default all)")
	fs.IntVar(&w.port, "webhook-port", webhook.DefaultPort, "port of the webhook server")
	fs.StringVar(&w.certDir, "webhook-cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory holding tls.crt and tls.key")
	fs.StringVar(&w.namespace, "webhook-namespace", "", "namespace of the webhook Service and Secret (default: $POD_NAMESPACE, then the service account's namespace)")
	fs.StringVar(&w.secretName, "webhook-secret-name", "pdtopo-webhook-server-cert", "Secret the rotator keeps the CA and serving certificate in")
	fs.StringVar(&w.serviceName, "webhook-service-name", "pdtopo-webhook-service", "Service the API server reaches the webhooks through (the certificate's DNS name)")
	fs.StringVar(&w.mutatingConfigs, "mutating-webhook-configurations", "pdtopo-mutating-webhook-configuration",
		"comma-separated MutatingWebhookConfigurations the rotator injects its CA into")
	fs.StringVar(&w.validatingConfigs, "validating-webhook-configurations", "pdtopo-validating-webhook-configuration",
		"comma-separated ValidatingWebhookConfigurations the rotator injects its CA into (missing ones are skipped)")
}

func (w *webhookOptions) validate() error {
	switch w.certs {
	case webhookCertsNone, webhookCertsFiles:
	case webhookCertsRotate:
		if w.namespace == "" {
			w.namespace = inClusterNamespace()
		}
		if w.namespace == "" {
			return errors.New("--webhook-certs=rotate needs --webhook-namespace (or $POD_NAMESPACE) outside a cluster")
		}
	default:
		return fmt.Errorf("--webhook-certs must be rotate, files or none, got %q", w.certs)
	}
	if w.port < 1 || w.port > 65535 {
		return fmt.Errorf("--webhook-port must be a TCP port, got %d", w.port)
	}
	return nil
}

// serverOptions configure the manager's webhook server. HTTP/2 is off: the
// API server speaks HTTP/1.1 to webhooks, and HTTP/2's stream reset attacks
// (CVE-2023-44487) need not be exposed.
func (w *webhookOptions) serverOptions() webhook.Options {
	return webhook.Options{
		Host: w.host, Port: w.port, CertDir: w.certDir,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }},
	}
}

// setupWebhooks arranges for register (which adds every admission handler
// to the manager's webhook server) to run once the serving certificate is
// in place, and returns the readiness check for it. The webhook server
// starts only when a handler is first registered, so with rotation it waits
// for the rotator instead of failing on certificate files not yet written.
// A registration failure after the manager started cancels it with the cause.
func setupWebhooks(mgr ctrl.Manager, w webhookOptions, register func(ctrl.Manager) error, fail context.CancelCauseFunc) (healthz.Checker, error) {
	switch w.certs {
	case webhookCertsNone:
		return healthz.Ping, nil
	case webhookCertsFiles:
		if err := register(mgr); err != nil {
			return nil, err
		}
		return mgr.GetWebhookServer().StartedChecker(), nil
	}
	certsReady := make(chan struct{})
	err := rotator.AddRotator(webhookConfigsByName(mgr, w), &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: w.namespace, Name: w.secretName},
		CertDir:        w.certDir,
		CAName:         "pdtopo-webhook-ca",
		CAOrganization: "pdtopo",
		DNSName:        fmt.Sprintf("%s.%s.svc", w.serviceName, w.namespace),
		ExtraDNSNames:  []string{fmt.Sprintf("%s.%s.svc.cluster.local", w.serviceName, w.namespace)},
		IsReady:        certsReady,
		Webhooks:       webhookInfos(w),
		// Every replica serves webhooks, so every replica needs the files.
		RequireLeaderElection: false,
	})
	if err != nil {
		return nil, fmt.Errorf("setting up certificate rotation: %w", err)
	}
	var registered atomic.Bool
	go func() {
		<-certsReady
		if err := register(mgr); err != nil {
			fail(fmt.Errorf("registering the webhooks: %w", err))
			return
		}
		registered.Store(true)
	}()
	return func(req *http.Request) error {
		if !registered.Load() {
			return errors.New("waiting for the webhook serving certificate")
		}
		return mgr.GetWebhookServer().StartedChecker()(req)
	}, nil
}

func webhookInfos(w webhookOptions) []rotator.WebhookInfo {
	var infos []rotator.WebhookInfo
	add := func(list string, t rotator.WebhookType) {
		for name := range strings.SplitSeq(list, ",") {
			if name = strings.TrimSpace(name); name != "" {
				infos = append(infos, rotator.WebhookInfo{Name: name, Type: t})
			}
		}
	}
	add(w.mutatingConfigs, rotator.Mutating)
	add(w.validatingConfigs, rotator.Validating)
	return infos
}

// inClusterNamespace is $POD_NAMESPACE (the Deployment sets it from the
// downward API), else the namespace of the mounted service account.
func inClusterNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

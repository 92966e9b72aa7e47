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
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/webhooks"
)

// Self-managed certificates against a real API server: the rotator fills the
// Secret with a CA and a serving certificate for the Service's DNS name,
// writes the CA into the generated MutatingWebhookConfiguration, and once the
// Secret's files appear in the cert dir (the kubelet's job, done here as the
// kubelet does it) the webhook server serves that certificate and the
// manager turns ready.
func TestRotatedCertificatesServeTheWebhook(t *testing.T) {
	env := testutil.StartForTest(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	const ns = "pdtopo-system"
	w := webhookOptions{certs: webhookCertsRotate, host: "127.0.0.1", port: testutil.FreePort(t), certDir: t.TempDir(), namespace: ns,
		secretName: "pdtopo-webhook-server-cert", serviceName: "pdtopo-webhook-service",
		mutatingConfigs: "pdtopo-mutating-webhook-configuration", validatingConfigs: "pdtopo-validating-webhook-configuration"}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.secretName}},
		deployedMutatingConfig(t, env.Root, w.mutatingConfigs, ns),
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme: env.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(w.serverOptions()),
	})
	if err != nil {
		t.Fatal(err)
	}
	ready, err := setupWebhooks(mgr, w, func(mgr ctrl.Manager) error {
		return registerWebhooks(mgr, options{agentSidecar: webhooks.AgentSidecar{Image: "agent:test"}})
	}, cancel)
	if err != nil {
		t.Fatal(err)
	}
	if ready(&http.Request{}) == nil {
		t.Fatal("ready before any certificate exists")
	}
	go func() { cancel(mgr.Start(ctx)) }()

	// The kubelet's part: the Secret's data, projected into the cert dir.
	var secret corev1.Secret
	testutil.Eventually(t, 30*time.Second, "the rotator fills the Secret", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: w.secretName}, &secret); err != nil {
			return err
		}
		if len(secret.Data["tls.crt"]) == 0 || len(secret.Data["ca.crt"]) == 0 {
			return fmt.Errorf("Secret holds %d keys", len(secret.Data))
		}
		return nil
	})
	if err := kubeletsim.WriteAtomic(w.certDir, secret.Data); err != nil {
		t.Fatal(err)
	}
	var caBundle []byte
	testutil.Eventually(t, 60*time.Second, "the CA injected into the webhook configuration", func() error {
		var cfg admissionregistrationv1.MutatingWebhookConfiguration
		if err := c.Get(ctx, client.ObjectKey{Name: w.mutatingConfigs}, &cfg); err != nil {
			return err
		}
		caBundle = cfg.Webhooks[0].ClientConfig.CABundle
		if len(caBundle) == 0 {
			return errors.New("no caBundle yet")
		}
		return nil
	})
	testutil.Eventually(t, 60*time.Second, "the manager ready with its webhooks", func() error {
		if err := context.Cause(ctx); err != nil {
			return fmt.Errorf("manager stopped: %w", err)
		}
		return ready(&http.Request{})
	})

	// What the API server does: trust the caBundle, expect the Service's name.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		t.Fatal("the caBundle holds no PEM certificate")
	}
	conn, err := tls.Dial("tcp", net.JoinHostPort(w.host, strconv.Itoa(w.port)),
		&tls.Config{RootCAs: pool, ServerName: w.serviceName + "." + ns + ".svc"})
	if err != nil {
		t.Fatalf("TLS to the webhook server as the API server would connect: %v", err)
	}
	conn.Close()
}

// deployedMutatingConfig is config/webhook's generated configuration under
// the name and Service namespace config/default gives it.
func deployedMutatingConfig(t *testing.T, root, name, ns string) *admissionregistrationv1.MutatingWebhookConfiguration {
	t.Helper()
	b, err := os.ReadFile(root + "/config/webhook/manifests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg admissionregistrationv1.MutatingWebhookConfiguration
	for doc := range strings.SplitSeq(string(b), "\n---\n") {
		if err := yaml.Unmarshal([]byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		if cfg.Kind == "MutatingWebhookConfiguration" {
			break
		}
	}
	if cfg.Kind != "MutatingWebhookConfiguration" {
		t.Fatal("config/webhook/manifests.yaml holds no MutatingWebhookConfiguration")
	}
	cfg.Name = name
	for i := range cfg.Webhooks {
		cfg.Webhooks[i].ClientConfig.Service.Namespace = ns
		cfg.Webhooks[i].ClientConfig.Service.Name = "pdtopo-webhook-service"
	}
	return &cfg
}

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
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/internal/kubeletsim"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
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
	// someone else's configuration, which the manager may neither read nor write
	theirs := deployedMutatingConfig(t, env.Root, "someone-elses-webhook", ns)
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: w.secretName}},
		deployedMutatingConfig(t, env.Root, w.mutatingConfigs, ns),
		theirs,
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// The manager runs as its service account with config/rbac's generated
	// roles and nothing else.
	account := "system:serviceaccount:" + ns + ":pdtopo-controller-manager"
	managerConfig := runAsWithGeneratedRBAC(t, env, c, account, ns)
	for _, q := range []struct {
		verb, resource, name string
		want                 bool
	}{
		{"update", "mutatingwebhookconfigurations", w.mutatingConfigs, true},
		{"watch", "mutatingwebhookconfigurations", w.mutatingConfigs, true},
		{"update", "validatingwebhookconfigurations", w.validatingConfigs, true},
		{"update", "mutatingwebhookconfigurations", theirs.Name, false},
		{"get", "mutatingwebhookconfigurations", theirs.Name, false},
		{"list", "mutatingwebhookconfigurations", "", false},
		{"update", "validatingwebhookconfigurations", "someone-elses-webhook", false},
	} {
		if got := allowed(t, c, account, q.verb, q.resource, q.name, q.want); got != q.want {
			t.Errorf("can %s %s/%s: %v, want %v", q.verb, q.resource, q.name, got, q.want)
		}
	}

	mgr, err := ctrl.NewManager(managerConfig, ctrl.Options{
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

	var after admissionregistrationv1.MutatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKeyFromObject(theirs), &after); err != nil || len(after.Webhooks[0].ClientConfig.CABundle) != 0 || after.Generation != 1 {
		t.Errorf("someone else's webhook configuration was changed: %v, generation %d", err, after.Generation)
	}

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

// runAsWithGeneratedRBAC binds config/rbac/role.yaml's ClusterRole and its
// Role (in ns, config/default's "system") to user, and returns a client
// configuration that authenticates as user.
func runAsWithGeneratedRBAC(t *testing.T, env *testutil.Env, admin client.Client, user, ns string) *rest.Config {
	t.Helper()
	ctx := context.Background()
	raw, err := os.ReadFile(env.Root + "/config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	subject := rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}
	for doc := range strings.SplitSeq(string(raw), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil || meta.Kind == "" {
			continue
		}
		switch meta.Kind {
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
			role.Name = "pdtopo-manager-role"
			bind := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name}, Subjects: []rbacv1.Subject{subject},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
			for _, obj := range []client.Object{&role, bind} {
				if err := admin.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
		case "Role":
			var role rbacv1.Role
			if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
			role.Name, role.Namespace = "pdtopo-manager-role", ns
			bind := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role.Name, Namespace: ns}, Subjects: []rbacv1.Subject{subject},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}}
			for _, obj := range []client.Object{&role, bind} {
				if err := admin.Create(ctx, obj); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	u, err := env.AddUser(envtest.User{Name: user, Groups: []string{"system:authenticated"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return u.Config()
}

// allowed asks the API server's authorizer whether user may verb the
// (cluster-scoped) resource named name ("" for the collection). Bindings
// reach the authorizer within moments, so when a "yes" is expected a "no"
// is asked again for a few seconds (ask those first).
func allowed(t *testing.T, admin client.Client, user, verb, resource, name string, expectYes bool) bool {
	t.Helper()
	ask := func() bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: verb, Group: "admissionregistration.k8s.io", Version: "v1", Resource: resource, Name: name}}}
		if err := admin.Create(context.Background(), sar); err != nil {
			t.Fatal(err)
		}
		return sar.Status.Allowed
	}
	if !expectYes {
		return ask()
	}
	return poll.Until(5*time.Second, func() error { // a new binding reaches the authorizer within moments
		if !ask() {
			return errors.New("not allowed")
		}
		return nil
	}, poll.Every(100*time.Millisecond)) == nil
}

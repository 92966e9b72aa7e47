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

package scale

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/internal/testenv"
)

// With --metrics-secure the real manager serves metrics only to callers the
// API server authenticates and authorizes: no token is refused, a service
// account's token is refused until it is bound to config/rbac's
// metrics-reader ClusterRole, and then it reads the metrics.
func TestMetricsNeedAuthorizedToken(t *testing.T) {
	env := testenv.StartForTest(t)
	k8s, kubeconfig := adminClient(t, env)
	mgr := startManager(t, env.Root, kubeconfig, "--metrics-secure")
	url := strings.Replace(mgr.metricsURL, "http://", "https://", 1)
	ctx := context.Background()

	// The manager's certificate is self-signed: what is checked is the token.
	httpc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	scrape := func(token string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := httpc.Do(req)
		// The secure server starts beside the probes, after generating its
		// self-signed certificate: until then the port is closed.
		for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
			resp, err = httpc.Do(req)
		}
		if err != nil {
			log, _ := os.ReadFile(mgr.log)
			t.Fatalf("scraping %s: %v\n%s", url, err, log)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, _ := scrape(""); code != http.StatusUnauthorized {
		t.Fatalf("a scrape without a token: %d, want 401", code)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "monitoring"}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "prometheus"}}
	for _, obj := range []client.Object{ns, sa} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	tr, err := cs.CoreV1().ServiceAccounts(ns.Name).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token := tr.Status.Token
	if code, _ := scrape(token); code != http.StatusForbidden {
		t.Fatalf("a scrape with an unbound service account's token: %d, want 403", code)
	}

	// Bind the token's account to the ClusterRole config/rbac ships.
	raw, err := os.ReadFile(filepath.Join(env.Root, "config", "rbac", "metrics_reader_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(raw, &role); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns.Name, Name: sa.Name}},
	}
	for _, obj := range []client.Object{&role, binding} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := scrape(token)
		if code == http.StatusOK {
			if !strings.Contains(body, "pdtopo_pdpairs") && !strings.Contains(body, "controller_runtime_") {
				t.Fatalf("200 without the manager's metrics:\n%.500s", body)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a scrape with a token bound to metrics-reader: %d\n%.300s", code, body)
		}
		time.Sleep(200 * time.Millisecond) // RBAC caches in the API server catch up
	}
}

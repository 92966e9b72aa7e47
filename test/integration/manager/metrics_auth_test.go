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

package manager

import (
	"context"
	"fmt"
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

	"github.com/pdtopo/pdtopo/test/testutil"
)

// With --metrics-secure the real manager serves metrics only to callers the
// API server authenticates and authorizes: no token is refused, a service
// account's token is refused until it is bound to config/rbac's
// metrics-reader ClusterRole, and then it reads the metrics.
func TestMetricsNeedAuthorizedToken(t *testing.T) {
	env := testutil.StartForTest(t)
	k8s, kubeconfig := adminClient(t, env)
	mgr := testutil.StartManager(t, env.Root, kubeconfig, "--metrics-secure")
	url := strings.Replace(mgr.MetricsURL, "http://", "https://", 1)
	ctx := context.Background()

	// The secure server starts beside the probes, after generating its
	// self-signed certificate: until then the port is closed.
	code := 0
	testutil.Eventually(t, 30*time.Second, "the secure metrics port", func() (err error) {
		code, _, err = testutil.Scrape(ctx, url, "")
		return err
	})
	if code != http.StatusUnauthorized {
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
	if code, _, err := testutil.Scrape(ctx, url, token); err != nil || code != http.StatusForbidden {
		t.Fatalf("a scrape with an unbound service account's token: %d %v, want 403", code, err)
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
	// RBAC caches in the API server catch up within moments.
	testutil.Eventually(t, 30*time.Second, "a scrape with a token bound to metrics-reader", func() error {
		code, body, err := testutil.Scrape(ctx, url, token)
		switch {
		case err != nil:
			return err
		case code != http.StatusOK:
			return fmt.Errorf("status %d: %.300s", code, body)
		case !strings.Contains(body, "pdtopo_pdpairs") && !strings.Contains(body, "controller_runtime_"):
			t.Fatalf("200 without the manager's metrics:\n%.500s", body)
		}
		return nil
	})
}

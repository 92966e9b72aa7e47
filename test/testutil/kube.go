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

package testutil

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// CreateNamespaces makes the namespaces, by name.
func CreateNamespaces(tb testing.TB, c client.Client, names ...string) {
	tb.Helper()
	for _, ns := range names {
		if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			tb.Fatalf("creating namespace %s: %v", ns, err)
		}
	}
}

// CanI is one `kubectl auth can-i` question, with the answer wanted ("yes"
// or "no").
type CanI struct {
	Args []string
	Want string
}

// AskCanI asks each question as the user as (an --as value) and fails the
// test on the first wrong answer. Role bindings reach the API server's
// authorizer within moments, so each question may be asked again for up to
// 10 seconds.
func AskCanI(tb testing.TB, kubectl, adminKubeconfig, as string, questions []CanI) {
	tb.Helper()
	for _, q := range questions {
		what := "kubectl auth can-i " + strings.Join(q.Args, " ") + " --as=" + as
		Eventually(tb, 10*time.Second, what, func() error {
			out, _ := exec.Command(kubectl, append([]string{"--kubeconfig", adminKubeconfig, "auth", "can-i", "--as=" + as}, q.Args...)...).Output()
			if got := strings.TrimSpace(string(out)); got != q.Want {
				return fmt.Errorf("%q, want %q", got, q.Want)
			}
			return nil
		})
	}
}

// insecureHTTPS trusts any certificate: a manager's metrics certificate is
// self-signed, and what the tests check is the token.
var insecureHTTPS = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// Scrape GETs a manager's secure metrics once, with the bearer token (none
// when empty), and returns the status code and body.
func Scrape(ctx context.Context, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := insecureHTTPS.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// AdminUser adds a cluster admin (system:masters) named name to env and
// writes its kubeconfig (for kubectl, helm, make) to a file of the test's.
// It returns the user, whose Config is the admin's client configuration,
// and the file's path.
func AdminUser(tb testing.TB, env *Env, name string) (*envtest.AuthenticatedUser, string) {
	tb.Helper()
	user, err := env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		tb.Fatal(err)
	}
	return user, path
}

// AdminKubeconfig is AdminUser's kubeconfig file.
func AdminKubeconfig(tb testing.TB, env *Env) string {
	tb.Helper()
	_, path := AdminUser(tb, env, "test-admin")
	return path
}

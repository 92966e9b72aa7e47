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
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pdtopo/pdtopo/internal/decodepodtest"
)

// canI is one `kubectl auth can-i` question about the manager's account,
// with the answer wanted ("yes" or "no").
type canI struct {
	args []string
	want string
}

// askAsManager asks each question as the manager's service account and
// fails the test on the first wrong answer. Role bindings reach the API
// server's authorizer within moments, so each question may be asked again
// for up to 10 seconds.
func askAsManager(t *testing.T, kubectl, adminKubeconfig string, questions []canI) {
	t.Helper()
	as := "--as=system:serviceaccount:" + managerNamespace + ":" + managerAccount
	for _, q := range questions {
		what := "kubectl auth can-i " + strings.Join(q.args, " ")
		decodepodtest.Eventually(t, 10*time.Second, what, func() error {
			out, _ := exec.Command(kubectl, append([]string{"--kubeconfig", adminKubeconfig, "auth", "can-i", as}, q.args...)...).Output()
			if got := strings.TrimSpace(string(out)); got != q.want {
				return fmt.Errorf("%q, want %q", got, q.want)
			}
			return nil
		})
	}
}

// createNamespaces makes the namespaces, by name.
func createNamespaces(t *testing.T, c client.Client, names ...string) {
	t.Helper()
	for _, ns := range names {
		if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
}

// insecureHTTPS trusts any certificate: the manager's metrics certificate
// is self-signed, and what the tests check is the token.
var insecureHTTPS = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

// scrape GETs the manager's secure metrics once, with the bearer token (none
// when empty), and returns the status code and body.
func scrape(ctx context.Context, url, token string) (int, string, error) {
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

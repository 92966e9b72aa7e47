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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

// The chart for real, in its cluster-wide (default) and namespaced modes:
// its objects (RBAC, webhook configurations, Services, the certificate
// Secret) are applied to the API server, and the real manager runs with
// the rendered Deployment's own arguments under the chart's service
// account. With nothing but what the chart grants, the manager must
// reconcile the PDPairs it watches and no others, rotate its webhook
// certificate into the Secret and both webhook configurations, and
// authorize a metrics scrape, without one "forbidden".
func TestChartRunsTheManager(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		// watched is nil when every namespace is.
		watched []string
		canI    []testutil.CanI
	}{
		{
			name: "cluster-wide",
			canI: []testutil.CanI{
				{Args: []string{"list", "pdpairs.pd.pdtopo.dev", "--all-namespaces"}, Want: "yes"},
				{Args: []string{"update", "secrets/pdtopo-webhook-server-cert", "-n", managerNamespace}, Want: "yes"},
				{Args: []string{"get", "secrets", "-n", "team-a"}, Want: "no"},
				{Args: []string{"patch", "secrets/inside-plans-seal", "-n", "team-a"}, Want: "no"},
				{Args: []string{"create", "secrets", "-n", "team-a"}, Want: "no"},
				{Args: []string{"get", "secrets/pdtopo-plan-signing-key", "-n", "team-a"}, Want: "no"},
				{Args: []string{"get", "secrets/pdtopo-plan-signing-key", "-n", managerNamespace}, Want: "yes"},
				{Args: []string{"create", "secrets", "-n", managerNamespace}, Want: "yes"},
				{Args: []string{"patch", "secrets/pdtopo-plan-signing-key", "-n", managerNamespace}, Want: "no"},
				{Args: []string{"update", "mutatingwebhookconfigurations/pdtopo-mutating-webhook-configuration"}, Want: "yes"},
				{Args: []string{"watch", "validatingwebhookconfigurations/pdtopo-validating-webhook-configuration"}, Want: "yes"},
				{Args: []string{"update", "mutatingwebhookconfigurations/someone-elses"}, Want: "no"},
				{Args: []string{"get", "mutatingwebhookconfigurations/someone-elses"}, Want: "no"},
				{Args: []string{"list", "validatingwebhookconfigurations"}, Want: "no"},
			},
		},
		{
			name:    "namespaced",
			values:  map[string]any{"watchNamespaces": watched},
			watched: watched,
			canI: []testutil.CanI{
				{Args: []string{"list", "pdpairs.pd.pdtopo.dev", "-n", "team-a"}, Want: "yes"},
				{Args: []string{"list", "pdpairs.pd.pdtopo.dev", "-n", unwatched}, Want: "no"},
				{Args: []string{"list", "configmaps", "--all-namespaces"}, Want: "no"},
				{Args: []string{"update", "mutatingwebhookconfigurations/pdtopo-mutating-webhook-configuration"}, Want: "yes"},
				{Args: []string{"update", "mutatingwebhookconfigurations/someone-elses"}, Want: "no"},
				{Args: []string{"get", "mutatingwebhookconfigurations/someone-elses"}, Want: "no"},
				{Args: []string{"patch", "secrets/inside-plans-seal", "-n", "team-a"}, Want: "no"},
				{Args: []string{"create", "secrets", "-n", "team-a"}, Want: "no"},
				{Args: []string{"get", "secrets/pdtopo-plan-signing-key", "-n", "team-a"}, Want: "no"},
				{Args: []string{"get", "secrets/pdtopo-plan-signing-key", "-n", managerNamespace}, Want: "yes"},
				{Args: []string{"create", "secrets", "-n", managerNamespace}, Want: "yes"},
				{Args: []string{"patch", "secrets/pdtopo-plan-signing-key", "-n", managerNamespace}, Want: "no"},
				{Args: []string{"create", "secrets", "-n", unwatched}, Want: "no"},
				{Args: []string{"get", "namespaces/team-a"}, Want: "yes"},
				{Args: []string{"get", "namespaces/" + unwatched}, Want: "no"},
				{Args: []string{"update", "secrets/pdtopo-webhook-server-cert", "-n", managerNamespace}, Want: "yes"},
				{Args: []string{"get", "secrets", "-n", "team-a"}, Want: "no"},
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) { runChartManager(t, c.values, c.watched, c.canI) })
	}
}

func runChartManager(t *testing.T, values map[string]any, watchedOnly []string, questions []testutil.CanI) {
	env := testutil.StartForTest(t)
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl")
	k8s, adminKubeconfig := adminClient(t, env)
	ctx := context.Background()
	testutil.CreateNamespaces(t, k8s, append([]string{managerNamespace, unwatched}, watched...)...)

	// The CRD is already installed (config/crd/bases): the chart's copy is
	// held to it by helmchart's tests.
	all := map[string]any{"crds": map[string]any{"install": false}}
	for k, v := range values {
		all[k] = v
	}
	raw, err := helmchart.Template(t, "pdtopo", managerNamespace, all)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := helmchart.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	var manager *corev1.Container
	var rest []byte
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			c := helmchart.Manager(t, o)
			manager = &c
			continue // no kubelet: the test runs the manager itself
		}
		b, err := o.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		rest = append(append(rest, b...), '\n')
	}
	if manager == nil {
		t.Fatal("the chart rendered no Deployment")
	}
	file := filepath.Join(t.TempDir(), "chart.json")
	if err := os.WriteFile(file, rest, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(kubectl, "--kubeconfig", adminKubeconfig, "apply", "--server-side", "-f", file).CombinedOutput(); err != nil {
		t.Fatalf("applying the chart: %v\n%s", err, out)
	}

	askAsManager(t, kubectl, adminKubeconfig, questions)

	// The Deployment's arguments, as the kubelet would pass them, less the
	// listen addresses (testutil.StartManager picks loopback ports) and leader
	// election; the webhook server writes its certificate to a temporary
	// directory instead of the Secret's mount.
	agentImage := ""
	for _, e := range manager.Env {
		if e.Name == "PDTOPO_AGENT_IMAGE" {
			agentImage = e.Value
		}
	}
	var args []string
	for _, a := range manager.Args {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--metrics-bind-address", "--health-probe-bind-address", "--leader-elect":
			continue
		}
		args = append(args, strings.ReplaceAll(a, "$(PDTOPO_AGENT_IMAGE)", agentImage))
	}
	certDir := t.TempDir()
	args = append(args, "--webhook-cert-dir="+certDir, "--webhook-port="+strconv.Itoa(testutil.FreePort(t)),
		"--webhook-namespace="+managerNamespace, "--signing-key-namespace="+managerNamespace) // POD_NAMESPACE, from the downward API in a pod
	// The kubelet's part: the Deployment mounts the certificate Secret at
	// the cert dir, and the rotator waits to see its certificate there.
	mountCtx, unmount := context.WithCancel(ctx)
	mounted := make(chan struct{})
	go func() {
		defer close(mounted)
		mountSecret(mountCtx, t, kubernetes.NewForConfigOrDie(env.Config), managerNamespace, "pdtopo-webhook-server-cert", certDir)
	}()
	t.Cleanup(func() { unmount(); <-mounted }) // before certDir goes
	kubeconfig := serviceAccountKubeconfig(t, env, managerNamespace, managerAccount)
	mgr := testutil.StartManager(t, env.Root, kubeconfig, args...) // ready: the webhook certificate is in place
	pairs := []*pdv1.PDPair{fixtures.GQAP8D4(unwatched, "outside")}
	for _, ns := range watched {
		pairs = append(pairs, fixtures.GQAP8D4(ns, "inside"))
	}
	createAll(t, k8s, pairs)
	if watchedOnly == nil {
		testutil.WaitPairs(t, k8s, time.Minute, pairs, pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
	} else {
		testutil.WaitPairs(t, k8s, time.Minute, pairs[1:], pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)
		var outside pdv1.PDPair
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(pairs[0]), &outside); err != nil {
			t.Fatal(err)
		}
		if len(outside.Status.Conditions) != 0 {
			t.Errorf("the pair in %s has a status: %+v", unwatched, outside.Status)
		}
	}

	// The manager made its signing key in its own namespace and signs.
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().Secrets(managerNamespace).Get(ctx, "pdtopo-plan-signing-key", metav1.GetOptions{}); err != nil {
		t.Errorf("the plan signing key: %v", err)
	}
	index, err := cs.CoreV1().ConfigMaps(pairs[1].Namespace).Get(ctx, planstore.IndexConfigMapName(pairs[1].Name), metav1.GetOptions{})
	if err != nil || index.Data[planstore.SignatureKey] == "" {
		t.Errorf("the index of %s/%s is not signed: %v", pairs[1].Namespace, pairs[1].Name, err)
	}

	// The rotator put its CA into both webhook configurations.
	testutil.Eventually(t, 30*time.Second, "the rotator's CA in both webhook configurations", func() error {
		mw, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "pdtopo-mutating-webhook-configuration", metav1.GetOptions{})
		if err != nil {
			return err
		}
		vw, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "pdtopo-validating-webhook-configuration", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(mw.Webhooks[0].ClientConfig.CABundle) == 0 || len(vw.Webhooks[0].ClientConfig.CABundle) == 0 {
			return fmt.Errorf("caBundle of %d and %d bytes", len(mw.Webhooks[0].ClientConfig.CABundle), len(vw.Webhooks[0].ClientConfig.CABundle))
		}
		return nil
	})

	// A scrape by an account bound to the chart's metrics-reader: the
	// manager's TokenReview and SubjectAccessReview are allowed.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "prometheus"}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-metrics-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "pdtopo-metrics-reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}},
	}
	for _, obj := range []client.Object{sa, binding} {
		if err := k8s.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(mgr.MetricsURL, "http://", "https://", 1)
	testutil.Eventually(t, 30*time.Second, "a scrape with a token bound to pdtopo-metrics-reader", func() error {
		code, _, err := testutil.Scrape(ctx, url, tr.Status.Token)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("status %d", code)
		}
		return err
	})

	if log, _ := os.ReadFile(mgr.LogPath); strings.Contains(string(log), "forbidden") {
		t.Errorf("the manager met a permission the chart does not grant:\n%s", log)
	}
}

// mountSecret copies the Secret's keys into dir as files, as the kubelet
// keeps a secret volume current, until ctx ends.
func mountSecret(ctx context.Context, t *testing.T, cs kubernetes.Interface, namespace, name, dir string) {
	written := map[string]string{}
	for ctx.Err() == nil {
		s, err := cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			for k, v := range s.Data {
				if written[k] == string(v) {
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, k), v, 0o600); err != nil {
					t.Errorf("mounting %s: %v", k, err)
					return
				}
				written[k] = string(v)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

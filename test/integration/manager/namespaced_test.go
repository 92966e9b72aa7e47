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
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// The manager's identity in config/default, and the namespaces of the test.
const (
	managerNamespace = "pdtopo-system"
	managerAccount   = "pdtopo-controller-manager"
)

var watched, unwatched = []string{"team-a", "team-b"}, "team-c"

// Namespaced mode: with only config/namespaced's Role bound in two
// namespaces (and nothing cluster-wide, as kubectl auth can-i confirms), the
// real manager run with --watch-namespaces reconciles the PDPairs there and
// never touches a third namespace's.
func TestNamespacedMode(t *testing.T) {
	env := testutil.StartForTest(t)
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl")
	k8s, adminKubeconfig := adminClient(t, env)
	ctx := context.Background()

	testutil.CreateNamespaces(t, k8s, append([]string{managerNamespace, unwatched}, watched...)...)
	if err := k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: managerNamespace, Name: managerAccount}}); err != nil {
		t.Fatal(err)
	}
	role, binding := namespacedRBAC(t, env.Root)
	for _, ns := range watched {
		r, b := role.DeepCopy(), binding.DeepCopy()
		r.Namespace, b.Namespace = ns, ns
		for _, obj := range []client.Object{r, b} {
			if err := k8s.Create(ctx, obj); err != nil {
				t.Fatal(err)
			}
		}
	}

	askAsManager(t, kubectl, adminKubeconfig, []testutil.CanI{
		{Args: []string{"list", "pdpairs.pd.pdtopo.dev", "-n", "team-a"}, Want: "yes"},
		{Args: []string{"patch", "pdpairs.pd.pdtopo.dev", "--subresource=status", "-n", "team-b"}, Want: "yes"},
		{Args: []string{"create", "configmaps", "-n", "team-a"}, Want: "yes"},
		{Args: []string{"list", "pdpairs.pd.pdtopo.dev", "-n", unwatched}, Want: "no"},
		{Args: []string{"create", "configmaps", "-n", unwatched}, Want: "no"},
		{Args: []string{"list", "pdpairs.pd.pdtopo.dev", "--all-namespaces"}, Want: "no"},
		{Args: []string{"list", "configmaps", "--all-namespaces"}, Want: "no"},
	})

	kubeconfig := serviceAccountKubeconfig(t, env, managerNamespace, managerAccount)
	mgr := testutil.StartManager(t, env.Root, kubeconfig, "--watch-namespaces="+strings.Join(watched, ","))

	var pairs []*pdv1.PDPair
	outside := fixtures.GQAP8D4(unwatched, "outside")
	pairs = append(pairs, outside)
	for _, ns := range watched {
		pairs = append(pairs, fixtures.GQAP8D4(ns, "inside"))
	}
	createAll(t, k8s, pairs) // the one outside first
	testutil.WaitPairs(t, k8s, time.Minute, pairs[1:], pdv1.PDPairReady, metav1.ConditionTrue, pdv1.ReasonReady)

	// Everything inside is done; the pair outside, created first, was never
	// looked at: no status, no ConfigMaps, and no refusal in the log.
	var got pdv1.PDPair
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(outside), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.Conditions) != 0 || got.Status.ObservedGeneration != 0 {
		t.Errorf("the pair in %s has a status: %+v", unwatched, got.Status)
	}
	var cms []string
	if err := listPlanConfigMaps(k8s, unwatched, outside.Name, &cms); err != nil {
		t.Fatal(err)
	}
	if len(cms) != 0 {
		t.Errorf("plan ConfigMaps %v in %s", cms, unwatched)
	}
	if log, _ := os.ReadFile(mgr.LogPath); strings.Contains(string(log), "forbidden") {
		t.Errorf("the manager met a permission it does not have:\n%s", log)
	}
}

// namespacedRBAC reads config/namespaced's Role and RoleBinding.
func namespacedRBAC(t *testing.T, root string) (*rbacv1.Role, *rbacv1.RoleBinding) {
	t.Helper()
	var role rbacv1.Role
	var binding rbacv1.RoleBinding
	for file, obj := range map[string]any{"role.yaml": &role, "role_binding.yaml": &binding} {
		raw, err := os.ReadFile(filepath.Join(root, "config", "namespaced", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(raw, obj); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	return &role, &binding
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// service account with a token from the TokenRequest API.
func serviceAccountKubeconfig(t *testing.T, env *testutil.Env, namespace, name string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["envtest"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: name}
	cfg.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func ptrTo[T any](v T) *T { return &v }

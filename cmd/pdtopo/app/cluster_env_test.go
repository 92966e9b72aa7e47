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

package app_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/controllers"
	"github.com/pdtopo/pdtopo/internal/manifest"
	"github.com/pdtopo/pdtopo/test/clitest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

// The cluster tests share one real control plane and one in-process manager
// running the real PDPair controller, started on first use so that the
// offline tests of this package need neither.
const (
	nsA          = "team-a"      // operated; the "live" context's namespace
	nsB          = "team-b"      // operated; the "live-b" context's namespace
	nsNoOperator = "no-operator" // the manager does not watch it: pairs stay without status
)

var (
	clusterOnce sync.Once
	clusterErr  error
	theCluster  *testCluster
)

type testCluster struct {
	env    *testutil.Env
	k8s    client.Client
	cancel context.CancelFunc
	done   <-chan struct{}
	// kubeconfig has the contexts "live" (namespace team-a), "live-b"
	// (namespace team-b) and "dead" (an address nothing listens on), and
	// "dead" is the current context.
	kubeconfig string
	dir        string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if theCluster != nil {
		theCluster.stop()
	}
	os.Exit(code)
}

// liveCluster returns the shared control plane, starting it on first use.
func liveCluster(t *testing.T) *testCluster {
	t.Helper()
	clusterOnce.Do(func() { theCluster, clusterErr = startCluster() })
	if errors.Is(clusterErr, testutil.ErrSkip) {
		t.Skip(clusterErr)
	}
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return theCluster
}

func startCluster() (*testCluster, error) {
	env, err := testutil.Start()
	if err != nil {
		return nil, err
	}
	tc := &testCluster{env: env}
	fail := func(err error) (*testCluster, error) {
		_ = env.Stop()
		return nil, err
	}
	if tc.k8s, err = client.New(env.Config, client.Options{Scheme: env.Scheme}); err != nil {
		return fail(err)
	}
	ctx := context.Background()
	for _, ns := range []string{nsA, nsB, nsNoOperator} {
		if err := tc.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fail(err)
		}
	}
	cacheOpts := controllers.CacheOptions()
	cacheOpts.DefaultNamespaces = map[string]cache.Config{nsA: {}, nsB: {}}
	mctx, cancel := context.WithCancel(ctx)
	tc.cancel = cancel
	if tc.done, err = (testutil.InProcessManager{Cache: cacheOpts, Setup: func(mgr ctrl.Manager) error {
		r := controllers.NewPDPairReconciler(mgr)
		// Contract tests change a contract ConfigMap and what engines answer.
		r.ContractRefreshInterval, r.LiveContractRefreshInterval, r.LiveContractRetryInterval = time.Second, time.Second, time.Second
		return r.SetupWithManager(mgr)
	}}).Run(mctx, env); err != nil {
		cancel()
		return fail(err)
	}
	if tc.dir, err = os.MkdirTemp("", "pdtopo-cli-"); err != nil {
		return fail(err)
	}
	if tc.kubeconfig, err = writeKubeconfig(tc.dir, env); err != nil {
		return fail(err)
	}
	return tc, nil
}

func (tc *testCluster) stop() {
	tc.cancel()
	<-tc.done
	if err := tc.env.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
	}
	os.RemoveAll(tc.dir)
}

// writeKubeconfig writes a kubeconfig whose current context points at a dead
// address, so that a test passing must have honoured --context.
func writeKubeconfig(dir string, env *testutil.Env) (string, error) {
	cfg := env.Config
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.Clusters["nowhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", InsecureSkipTLSVerify: true}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["live"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: nsA}
	kc.Contexts["live-b"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin", Namespace: nsB}
	kc.Contexts["dead"] = &clientcmdapi.Context{Cluster: "nowhere", AuthInfo: "admin", Namespace: nsA}
	kc.CurrentContext = "dead"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// applySample creates the PDPair of a config/samples file in namespace ns
// under the given name. Every test uses its own names: envtest runs no
// garbage collector, so a deleted pair's ConfigMaps stay and would conflict
// with a new pair of the same name.
func (tc *testCluster) applySample(t *testing.T, ns, file, name string) *pdv1.PDPair {
	t.Helper()
	pair, err := manifest.ReadPDPairFile(filepath.Join(tc.env.Root, "config", "samples", file), "")
	if err != nil {
		t.Fatal(err)
	}
	pair.Namespace, pair.Name = ns, name
	if err := tc.k8s.Create(context.Background(), pair); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tc.k8s.Delete(context.Background(), pair) })
	return pair
}

// waitSettled polls until the operator has observed the pair's generation
// and set its Ready condition, and returns the pair as the server holds it.
func (tc *testCluster) waitSettled(t *testing.T, ns, name string) *pdv1.PDPair {
	t.Helper()
	return tc.waitFor(t, ns, name, func(p *pdv1.PDPair) bool {
		return p.Status.ObservedGeneration == p.Generation && hasCondition(p, pdv1.PDPairReady)
	})
}

// waitFor polls the pair until ok holds, for at most 30 seconds.
func (tc *testCluster) waitFor(t *testing.T, ns, name string, ok func(*pdv1.PDPair) bool) *pdv1.PDPair {
	t.Helper()
	return testutil.WaitPair(t, tc.k8s, 30*time.Second, client.ObjectKey{Namespace: ns, Name: name}, ok)
}

func hasCondition(p *pdv1.PDPair, t pdv1.PDPairConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == string(t) {
			return true
		}
	}
	return false
}

// cli runs pdtopo against the test cluster's kubeconfig.
func (tc *testCluster) cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(t, "", append(args, "--kubeconfig", tc.kubeconfig)...)
}

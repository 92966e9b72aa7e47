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

package plansource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
)

func dpDecode() planv1.Layout { // decode DP 2: engine ranks 5, 6 are decode TP ranks 1, 2
	l := fixtures.FragmentedP8D4()
	l.Decode = transferplan.Parallelism{TPSize: 8, DPSize: 2}
	return l
}

func TestFileSource(t *testing.T) {
	set := fixtures.MustPlan(dpDecode())
	raw, _ := json.Marshal(set)
	path := filepath.Join(t.TempDir(), "plans.json")
	writeFile(t, path, raw)
	plans, err := File{Path: path, EngineRanks: []int{5, 6}}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(plans.Ranks) != 2 || plans.Ranks[0].Plan.DecodeTPRank != 1 || plans.Ranks[1].Plan.DecodeTPRank != 2 || plans.Hash != set.Hash() || plans.Ranks[1].Hash != set.Hash() {
		t.Fatalf("engine ranks 5, 6 got %+v", plans)
	}
	for name, body := range map[string]string{
		"not JSON":     "nope",
		"other format": `{"apiVersion":"v1","kind":"ConfigMap"}`,
		"no plans":     `{"compatible":true,"plans":[]}`,
		"incompatible": strings.Replace(string(raw), `"compatible":true`, `"compatible":false`, 1),
	} {
		writeFile(t, path, []byte(body))
		if _, err := (File{Path: path, EngineRanks: []int{0}}).Load(context.Background()); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	writeFile(t, path, raw)
	if _, err := (File{Path: path, EngineRanks: []int{7, 8}}).Load(context.Background()); err == nil || !strings.Contains(err.Error(), "engine rank 8 is outside the decode fleet of 8") {
		t.Errorf("engine ranks 7, 8 of 8: %v", err)
	}
}

// Every rank of a pod is read from one publication; a rank past the fleet
// refuses the whole load, naming the pod's range.
func TestDirSourceLoadsEveryRankOfThePod(t *testing.T) {
	dir := t.TempDir()
	objects, hash := receivertest.Publish(t, "pair", dpDecode())
	receivertest.ProjectPlans(t, dir, 1, receivertest.Reshard(t, objects, 4))
	plans, err := Dir{Path: dir, EngineRanks: []int{4, 5, 6, 7}}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, r := range plans.Ranks {
		got = append(got, r.Plan.DecodeTPRank)
	}
	if plans.PDPair != "pair" || plans.Hash != hash || len(got) != 4 || got[0] != 0 || got[3] != 3 {
		t.Fatalf("engine ranks 4..7 (decode DP 2 of TP 4): pdpair %q, hash %s, decode TP ranks %v", plans.PDPair, plans.Hash, got)
	}
	_, err = Dir{Path: dir, EngineRanks: []int{6, 7, 8}}.Load(context.Background())
	if err == nil || !strings.Contains(err.Error(), "engine rank 8 is outside the decode fleet of 8 ranks") || !strings.Contains(err.Error(), "engine ranks 6..8") {
		t.Fatalf("engine ranks 6..8 of 8: %v", err)
	}
}

// TestAPISourceFollowsConfigMaps publishes plans to the real kube-apiserver
// and reads them back as --pdpair does, with only the permissions the
// shipped Role (config/agent-rbac) grants: by GET before the informers run,
// from their caches after, which also say when they change. Only the index
// the PDPair's status names is loaded.
func TestAPISourceFollowsConfigMaps(t *testing.T) {
	env, err := testutil.Start()
	if errors.Is(err, testutil.ErrSkip) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	// the agent authenticates as the service account config/agent-rbac binds
	user, err := env.AddUser(envtest.User{Name: "system:serviceaccount:llm:pdtopo-receiver-agent", Groups: []string{"system:serviceaccounts", "system:serviceaccounts:llm", "system:authenticated"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfigPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(NamespaceEnv, "llm")
	src, err := NewAPI(kubeconfigPath, "pair", []int{5}) // the namespace from POD_NAMESPACE
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cms := admin.CoreV1().ConfigMaps("llm")
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "llm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The PDPair whose status names the published index, as the operator's does.
	pairs, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	pair := fixtures.GQAPair("llm", "pair", 8, 4, 4, 512)
	if err := pairs.Create(ctx, pair); err != nil {
		t.Fatal(err)
	}
	writeConfigMaps := func(objects []planstore.Object) {
		t.Helper()
		for _, o := range objects {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: "llm", Labels: map[string]string{pdv1.LabelPDPair: "pair"}}, Data: o.Data, BinaryData: o.BinaryData}
			if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	publish := func(objects []planstore.Object, hash string) {
		t.Helper()
		writeConfigMaps(objects)
		sum := sha256.Sum256([]byte(objects[0].Data[planstore.IndexKey]))
		before := pair.DeepCopy()
		pair.Status.ObservedGeneration = pair.Generation
		pair.Status.Plan = &pdv1.PlanSummary{Kind: "fragmented", DecodeTPRanks: 4, Hash: hash, IndexSHA256: hex.EncodeToString(sum[:])}
		if err := pairs.Status().Patch(ctx, pair, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}
	first, firstHash := receivertest.Publish(t, "pair", dpDecode())
	publish(first, firstHash)
	if _, err := Load(ctx, src); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Fatalf("the agent read the plans before its Role was bound: %v", err)
	}
	applyAgentRBAC(ctx, t, env.Root, admin, "llm")

	// by GET, once the binding is in the authorizer's cache
	loaded := testutil.EventuallyValue(t, 10*time.Second, "the agent reading its plans with the shipped Role", func() (Loaded, error) { return Load(ctx, src) })
	if loaded.Plans.Ranks[0].Plan.DecodeTPRank != 1 || loaded.Plans.Hash != firstHash || loaded.Plans.PDPair != "pair" || loaded.Version == "" {
		t.Fatalf("loaded %+v", loaded)
	}

	// A follower that only learns of changes from the informer (the resync
	// is an hour): every step below must arrive by watch.
	rec := &recorder{failed: map[string]int{}}
	f := &Follower{Source: src, Resync: time.Hour, Apply: rec.apply, Report: rec.reportErr, Failed: rec.fail, Log: slog.New(slog.DiscardHandler)}
	go f.Run(ctx, loaded)
	second := fixtures.MHA(8, 8, fixtures.Buffers(2, 128, 128, 128)) // engine rank 5 becomes decode TP rank 5
	secondObjects, secondHash := receivertest.Publish(t, "pair", second)
	publish(receivertest.Reshard(t, secondObjects, 3), secondHash) // a shard count the first publication did not have
	rec.waitFor(t, []string{secondHash}, "")
	if p, err := Load(ctx, src); err != nil || p.Plans.Ranks[0].Plan.DecodeTPRank != 5 {
		t.Fatalf("engine rank 5 on the second publication: %+v %v", p, err)
	}

	publish(receivertest.Reshard(t, first, 3), firstHash) // the same ConfigMaps updated, none added
	rec.waitFor(t, []string{secondHash, firstHash}, "")

	// The second publication's ConfigMaps written back by someone else,
	// while the status names the first: refused, the first plan kept.
	writeConfigMaps(receivertest.Reshard(t, secondObjects, 3))
	rec.waitFor(t, []string{secondHash, firstHash}, string(planstore.ReasonSealMismatch))
	writeConfigMaps(receivertest.Reshard(t, first, 3))
	rec.waitFor(t, []string{secondHash, firstHash}, "")

	for _, o := range receivertest.Reshard(t, secondObjects, 3) {
		if err := cms.Delete(ctx, o.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rec.waitFor(t, []string{secondHash, firstHash}, `configmap "pair-plans" not found`)
}

func TestParsePDPair(t *testing.T) {
	for _, c := range []struct{ in, env, ns, name string }{
		{"llm/pair", "", "llm", "pair"},
		{"llm/pair", "other", "llm", "pair"},
		{"pair", "llm", "llm", "pair"},
	} {
		ns, name, err := ParsePDPair(c.in, c.env)
		if err != nil || ns != c.ns || name != c.name {
			t.Errorf("%q with POD_NAMESPACE=%q: %q %q %v", c.in, c.env, ns, name, err)
		}
	}
	for _, bad := range []string{"", "/name", "ns/", "a/b/c"} {
		if _, _, err := ParsePDPair(bad, "llm"); err == nil || !strings.Contains(err.Error(), "NAMESPACE/NAME") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, _, err := ParsePDPair("pair", ""); err == nil || !strings.Contains(err.Error(), NamespaceEnv+" is not set") {
		t.Errorf("a bare name without POD_NAMESPACE: %v", err)
	}
}

// Outside a cluster and without a kubeconfig the API source says so.
func TestNewAPIWithoutKubeconfigOutsideACluster(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	if _, err := NewAPI("", "llm/pair", []int{0}); err == nil || !strings.Contains(err.Error(), "not in a cluster") {
		t.Fatalf("no kubeconfig, no cluster: %v", err)
	}
}

// recorder collects what a Follower applies and reports.
type recorder struct {
	mu      sync.Mutex
	applied []string
	report  string
	refuse  string // a hash Apply refuses
	failed  map[string]int
}

func (r *recorder) apply(p Plans) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Hash == r.refuse {
		return errors.New("refused on purpose")
	}
	r.applied = append(r.applied, p.Hash)
	return nil
}

func (r *recorder) reportErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.report = ""
	if err != nil {
		r.report = err.Error()
	}
}

func (r *recorder) fail(stage string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed[stage]++
}

// waitFor polls until the recorder shows applied (in order) and a report
// containing report ("" for none).
func (r *recorder) waitFor(t *testing.T, applied []string, report string) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, "the follower's plans and report", func() error {
		r.mu.Lock()
		got, rep := strings.Join(r.applied, ","), r.report
		r.mu.Unlock()
		if got == strings.Join(applied, ",") && (report == "" && rep == "" || report != "" && strings.Contains(rep, report)) {
			return nil
		}
		return fmt.Errorf("applied %s and report %q; want %v and a report containing %q", got, rep, applied, report)
	})
}

// TestFollowerWatchesAProjectedDir follows a kubelet-style projected
// directory through an update that changes the shard count, a deletion of
// every plan ConfigMap (the last good plan kept, the error reported), the
// plans coming back, and a refused plan. The resync interval is an hour:
// only the file-system watch can make it pass.
func TestFollowerWatchesAProjectedDir(t *testing.T) {
	dir := t.TempDir()
	first, firstHash := receivertest.Publish(t, "pair", fixtures.FragmentedP8D4())
	receivertest.ProjectPlans(t, dir, 1, first)
	src := Dir{Path: dir, EngineRanks: []int{0, 1}}
	loaded, err := Load(context.Background(), src)
	if err != nil || loaded.Plans.Hash != firstHash {
		t.Fatal(err)
	}
	rec := &recorder{failed: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &Follower{Source: src, Resync: time.Hour, Apply: rec.apply, Report: rec.reportErr, Failed: rec.fail, Log: slog.New(slog.DiscardHandler)}
	go f.Run(ctx, loaded)

	second, secondHash := receivertest.Publish(t, "pair", fixtures.Identity())
	receivertest.ProjectPlans(t, dir, 2, receivertest.Reshard(t, second, 4))
	rec.waitFor(t, []string{secondHash}, "")

	receivertest.ProjectPlans(t, dir, 3, nil) // every plan ConfigMap deleted
	rec.waitFor(t, []string{secondHash}, "no index.json")
	if rec.failed["read"] == 0 {
		t.Fatal("the failed read was not counted")
	}

	receivertest.ProjectPlans(t, dir, 4, second) // back, in one shard: same plans
	rec.waitFor(t, []string{secondHash}, "")

	rec.mu.Lock()
	rec.refuse = firstHash
	rec.mu.Unlock()
	receivertest.ProjectPlans(t, dir, 5, first)
	rec.waitFor(t, []string{secondHash}, "refused on purpose")
	if rec.failed["refused"] != 1 {
		t.Fatalf("refusals counted %d times, want 1", rec.failed["refused"])
	}
}

// applyAgentRBAC creates config/agent-rbac's objects in namespace as
// \`kubectl apply -n NAMESPACE -k config/agent-rbac\` does.
func applyAgentRBAC(ctx context.Context, t *testing.T, root string, admin kubernetes.Interface, namespace string) {
	t.Helper()
	read := func(name string, into any) {
		raw, err := os.ReadFile(filepath.Join(root, "config", "agent-rbac", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(raw, into); err != nil {
			t.Fatalf("config/agent-rbac/%s: %v", name, err)
		}
	}
	var (
		sa      corev1.ServiceAccount
		role    rbacv1.Role
		binding rbacv1.RoleBinding
	)
	read("service_account.yaml", &sa)
	read("role.yaml", &role)
	read("role_binding.yaml", &binding)
	if _, err := admin.CoreV1().ServiceAccounts(namespace).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().Roles(namespace).Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().RoleBindings(namespace).Create(ctx, &binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A plain directory whose index disappears is unreadable (no version at
// all, unlike a projected volume, which swaps to an empty snapshot): the
// follower reports it, counts it, and clears it when the index is back.
func TestFollowerReportsAnUnreadableSource(t *testing.T) {
	dir := t.TempDir()
	objects, hash := receivertest.Publish(t, "pair", fixtures.FragmentedP8D4())
	write := func() {
		for _, o := range objects {
			for k, v := range o.Data {
				writeFile(t, filepath.Join(dir, k), []byte(v))
			}
			for k, v := range o.BinaryData {
				writeFile(t, filepath.Join(dir, k), v)
			}
		}
	}
	write()
	src := Dir{Path: dir, EngineRanks: []int{0}}
	loaded, err := Load(context.Background(), src)
	if err != nil || loaded.Plans.Hash != hash {
		t.Fatal(err)
	}
	rec := &recorder{failed: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &Follower{Source: src, Resync: time.Hour, Apply: rec.apply, Report: rec.reportErr, Failed: rec.fail, Log: slog.New(slog.DiscardHandler)}
	go f.Run(ctx, loaded)
	if err := os.Remove(filepath.Join(dir, planstore.IndexKey)); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, nil, "index.json: no such file")
	rec.mu.Lock()
	failed := rec.failed["read"]
	rec.mu.Unlock()
	if failed == 0 {
		t.Fatal("the unreadable source was not counted")
	}
	write()
	rec.waitFor(t, nil, "")
}

// writeFile writes a test's file or fails the test.
func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

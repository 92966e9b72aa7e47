package plansource

import (
	"context"
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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/pdtopo/pdtopo/internal/receiverfixtures"
	"github.com/pdtopo/pdtopo/internal/testenv"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func dpDecode() transferplan.Layout { // decode DP 2: engine rank 5 is decode TP rank 1
	l := receiverfixtures.FragmentedP8D4()
	l.Decode = transferplan.Parallelism{TPSize: 8, DPSize: 2}
	return l
}

func TestFileSource(t *testing.T) {
	set := receiverfixtures.MustPlan(dpDecode())
	raw, _ := json.Marshal(set)
	path := filepath.Join(t.TempDir(), "plans.json")
	os.WriteFile(path, raw, 0o644)
	snap, err := File{Path: path, EngineRank: 5}.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Plan.DecodeTPRank != 1 || snap.Hash != set.Hash() {
		t.Fatalf("engine rank 5 got decode TP rank %d, hash %s", snap.Plan.DecodeTPRank, snap.Hash)
	}
	for name, body := range map[string]string{
		"not JSON":     "nope",
		"other format": `{"apiVersion":"v1","kind":"ConfigMap"}`,
		"no plans":     `{"compatible":true,"plans":[]}`,
		"incompatible": strings.Replace(string(raw), `"compatible":true`, `"compatible":false`, 1),
	} {
		os.WriteFile(path, []byte(body), 0o644)
		if _, err := (File{Path: path, EngineRank: 0}).Load(context.Background()); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
	os.WriteFile(path, raw, 0o644)
	if _, err := (File{Path: path, EngineRank: 8}).Load(context.Background()); err == nil || !strings.Contains(err.Error(), "outside the decode fleet of 8") {
		t.Errorf("engine rank 8 of 8: %v", err)
	}
}

// TestAPISourceReadsOnlyItsShard publishes plans to the real kube-apiserver
// and reads them back the way --kubeconfig and --pdpair do.
func TestAPISourceReadsOnlyItsShard(t *testing.T) {
	env, err := testenv.Start()
	if errors.Is(err, testenv.ErrSkip) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	user, err := env.AddUser(envtest.User{Name: "receiver-agent", Groups: []string{"system:masters"}}, nil)
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

	set := receiverfixtures.MustPlan(dpDecode())
	objects, err := planstore.Encode("pair", set)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewAPI(kubeconfigPath, "llm/pair", 5)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := src.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "llm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, o := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: "llm"}, Data: o.Data, BinaryData: o.BinaryData}
		if _, err := src.Client.CoreV1().ConfigMaps("llm").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	loaded, err := Load(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Snapshot.Plan.DecodeTPRank != 1 || loaded.Snapshot.Hash != set.Hash() || loaded.Version == "" {
		t.Fatalf("loaded %+v", loaded)
	}
	missing, err := NewAPI(kubeconfigPath, "llm/other", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := missing.Load(ctx); err == nil || !strings.Contains(err.Error(), "llm/other-plans") {
		t.Fatalf("missing PDPair: %v", err)
	}
}

func TestNewAPIChecksPDPairName(t *testing.T) {
	for _, bad := range []string{"name", "/name", "ns/", "a/b/c"} {
		if _, err := NewAPI("/nonexistent", bad, 0); err == nil || !strings.Contains(err.Error(), "NAMESPACE/NAME") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// TestWatchAppliesNewPlans follows a plan file through updates, a broken
// version (kept out) and an update back.
func TestWatchAppliesNewPlans(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plans.json")
	write := func(l transferplan.Layout) string {
		set := receiverfixtures.MustPlan(l)
		raw, _ := json.Marshal(set)
		os.WriteFile(path, raw, 0o644)
		return set.Hash()
	}
	first := write(receiverfixtures.FragmentedP8D4())
	src := File{Path: path, EngineRank: 0}
	loaded, err := Load(context.Background(), src)
	if err != nil || loaded.Snapshot.Hash != first {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var applied []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Watch(ctx, src, 5*time.Millisecond, loaded, func(s receiver.PlanSnapshot) error {
		mu.Lock()
		defer mu.Unlock()
		applied = append(applied, s.Hash)
		return nil
	}, slog.New(slog.DiscardHandler))
	waitFor := func(want []string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			got := fmt.Sprint(applied)
			mu.Unlock()
			if got == fmt.Sprint(want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("applied %s, want %v", got, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	second := write(receiverfixtures.Identity())
	waitFor([]string{second})
	os.WriteFile(path, []byte("{broken"), 0o644)
	time.Sleep(30 * time.Millisecond) // several polls of a broken file: nothing applied
	waitFor([]string{second})
	write(receiverfixtures.FragmentedP8D4())
	waitFor([]string{second, first})
}

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

package localcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

const repoRoot = "../.."

// TestSessionRunsSamplesAndStopsCleanly is `make run` without the terminal:
// the real etcd and kube-apiserver from bin/, the CRD from config/crd/bases,
// the manager built from cmd/manager, every sample. It checks that the
// samples are visible through the written kubeconfig (as from another
// terminal), that the manager gives each the status its comment promises,
// that the live table shows them, and that Stop leaves no process, port,
// directory or kubeconfig behind.
func TestSessionRunsSamplesAndStopsCleanly(t *testing.T) {
	o := testOptions(t)
	o.ManagerPath = buildManager(t)
	if o.ManagerPath != "" {
		o.PeerPath, o.AgentPath = buildCmd(t, "prefill-peer"), buildCmd(t, "receiver-agent")
		// A random loopback address: the agent's probe port is the fixed 9440.
		o.PodIP = fmt.Sprintf("127.%d.%d.%d", 64+rand.IntN(64), 1+rand.IntN(254), 1+rand.IntN(254))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	s, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = s.Stop()
		}
	}()
	t.Logf("started in %s", s.StartupTime)
	if s.SampleErr != nil {
		t.Fatalf("samples refused by the API server:\n%v", s.SampleErr)
	}
	names := sampleNames(t)
	if len(s.Applied) != len(names) {
		t.Fatalf("applied %d objects, config/samples holds %d PDPairs", len(s.Applied), len(names))
	}

	other := clientFromKubeconfig(t, s.KubeconfigPath())
	for _, name := range names {
		var p pdv1.PDPair
		if err := other.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &p); err != nil {
			t.Errorf("sample %s not visible through %s: %v", name, s.KubeconfigPath(), err)
		}
	}
	checkKubectlLists(t, s.KubeconfigPath(), names)
	if o.ManagerPath != "" {
		waitForSampleStatus(ctx, t, other, names)
		checkDecodeDemo(ctx, t, s, other)
		checkTraffic(t, s)
	}
	checkLiveTable(t, s, names)

	// What must be gone after Stop.
	apiAddr := hostPort(t, s.cp.URL())
	etcdAddr := s.cp.Env.ControlPlane.Etcd.URL.Host
	dirs := []string{s.cp.EtcdDataDir, s.cp.APIServerCertDir}
	managerPID := 0
	if s.manager != nil {
		managerPID = s.manager.Pid()
	}
	var trafficPIDs []int
	for _, d := range s.Demos {
		if d.Traffic != nil {
			trafficPIDs = append(trafficPIDs, d.Traffic.agent.Pid(), d.Traffic.peer.Pid())
			dirs = append(dirs, d.Traffic.dir, d.Traffic.agent.dir)
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil || d == "" {
			t.Fatalf("control-plane directory %q should exist while running: %v", d, err)
		}
	}

	began := time.Now()
	stopped = true
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("stopped in %s", time.Since(began))
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after Stop", d)
		}
		if pids := processesMentioning(d); len(pids) > 0 {
			t.Errorf("processes %v still run with %s", pids, d)
		}
	}
	for _, addr := range []string{apiAddr, etcdAddr} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Stop", addr)
		}
	}
	if managerPID != 0 {
		if err := syscall.Kill(managerPID, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("manager pid %d still exists after Stop (kill 0: %v)", managerPID, err)
		}
	}
	for _, pid := range trafficPIDs {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("agent or prefill peer pid %d still exists after Stop (kill 0: %v)", pid, err)
		}
	}
	if _, err := os.Stat(s.KubeconfigPath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("kubeconfig %s still exists after Stop", s.KubeconfigPath())
	}
}

// checkTraffic: side by side, a v1 pair and a cache-contract pair: each
// decode pod's agent, run from its container spec, serves every engine rank
// of the pod, and rooms driven through it against its prefill peer (the
// contract one with the engine's manifests) succeed, none failing; the
// table lines say so.
func checkTraffic(t *testing.T, s *Session) {
	t.Helper()
	wires := map[pdv1.Wire]int{}
	for _, d := range s.Demos {
		if d.TrafficErr != nil || d.Traffic == nil {
			t.Fatalf("no traffic for %s: %v", d.File, d.TrafficErr)
		}
		var pair pdv1.PDPair
		if err := s.Client().Get(context.Background(), d.Traffic.Pair, &pair); err != nil {
			t.Fatal(err)
		}
		wires[pair.Spec.WireOrDefault()]++
		if got := d.Traffic.Ranks; len(got) != 4 || got[0] != 0 || got[3] != 3 {
			t.Errorf("%s: agent serves engine ranks %v, want 0..3 (ranks-per-pod defaults to the decode TP, 4)", d.File, got)
		}
	}
	if wires[pdv1.WireV1] != 1 || wires[pdv1.WireCacheContract] != 1 {
		t.Fatalf("demo pairs by wire: %v, want one v1 and one cache-contract pair", wires)
	}
	for _, d := range s.Demos {
		testutil.Eventually(t, 90*time.Second, "20 rooms succeeded", func() error {
			ok, failed := d.Traffic.Counts()
			if failed > 0 {
				t.Fatalf("rooms failed: %s", d.Traffic.Line())
			}
			if ok < 20 {
				return errors.New(d.Traffic.Line())
			}
			return nil
		}, poll.Every(100*time.Millisecond))
		line := d.Traffic.Line()
		if !regexp.MustCompile(`: 4 engine ranks, [1-9][0-9.]* rooms/s, [0-9]+ succeeded, 0 failed$`).MatchString(line) {
			t.Errorf("table line %q does not show 4 ranks, a positive rate and no failures", line)
		}
		t.Logf("traffic: %s", line)
	}
}

// buildCmd builds the command called name (a directory of cmd) into a temporary directory.
func buildCmd(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", out, "./cmd/"+name)
	cmd.Dir = repoRoot
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, msg)
	}
	return out
}

// TestStartNamesWhatIsMissing needs no binaries: every missing input is
// reported at once, with the command that makes it.
func TestStartNamesWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := Start(context.Background(), Options{
		BinDir: dir, CRDDir: dir, SamplesDir: filepath.Join(dir, "nosamples"), ManagerPath: filepath.Join(dir, "manager"),
		KubeconfigPath: filepath.Join(dir, "kc"), LogDir: dir,
	})
	if err == nil {
		t.Fatal("Start succeeded with nothing to start")
	}
	for _, want := range []string{"kube-apiserver is missing", "etcd is missing", "make controlplane",
		"manager is missing", "holds no CRD manifests", "make manifests", "nosamples"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

// testOptions points at the repository's binaries, CRDs and samples, and at
// temporary places for what a session writes; it skips without the binaries.
func testOptions(t *testing.T) Options {
	t.Helper()
	o := Defaults()
	o.BinDir = testutil.BinDir(t) // fails without the binaries unless PDTOPO_SKIP_ENVTEST=1
	o.CRDDir = filepath.Join(repoRoot, o.CRDDir)
	o.SamplesDir = filepath.Join(repoRoot, o.SamplesDir)
	o.WebhookDir = filepath.Join(repoRoot, o.WebhookDir)
	for i, f := range o.DecodePodFiles {
		o.DecodePodFiles[i] = filepath.Join(repoRoot, f)
	}
	o.KubeconfigPath = filepath.Join(t.TempDir(), "local.kubeconfig")
	o.LogDir = t.TempDir()
	o.Progress = testLog{t}
	o.ManagerPath, o.PeerPath, o.AgentPath = "", "", ""
	return o
}

// buildManager builds cmd/manager into a temporary directory; "" (no manager)
// while the package does not exist yet.
func buildManager(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, "cmd", "manager")); err != nil {
		t.Logf("cmd/manager does not exist: running without a manager")
		return ""
	}
	out := filepath.Join(t.TempDir(), "manager")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/manager")
	cmd.Dir = repoRoot
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/manager: %v\n%s", err, msg)
	}
	return out
}

// sampleNames lists the PDPairs of config/samples.
func sampleNames(t *testing.T) []string {
	t.Helper()
	files, err := sampleFiles(filepath.Join(repoRoot, "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			names = append(names, o.GetName())
		}
	}
	return names
}

func clientFromKubeconfig(t *testing.T, path string) client.Client {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig %s has mode %v, want 0600 (it holds the admin key)", path, st.Mode().Perm())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	c, err := newClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkKubectlLists runs bin/kubectl (when built) as a user in another terminal would.
func checkKubectlLists(t *testing.T, kubeconfig string, names []string) {
	t.Helper()
	kubectl := filepath.Join(repoRoot, "bin", "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Logf("%s not built; skipping the kubectl check", kubectl)
		return
	}
	out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "get", "pdp", "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get pdp: %v\n%s", err, out)
	}
	for _, n := range names {
		if !strings.Contains(string(out), "pdpair.pd.pdtopo.dev/"+n+"\n") {
			t.Errorf("kubectl get pdp does not list %s:\n%s", n, out)
		}
	}
}

// waitForSampleStatus waits until the manager has reconciled every sample
// and checks the outcome each sample's comment promises: Ready, except the
// incompatible one, which is UnitSizeMismatch.
func waitForSampleStatus(ctx context.Context, t *testing.T, c client.Client, names []string) {
	t.Helper()
	pairs := make([]pdv1.PDPair, len(names))
	testutil.Eventually(t, 90*time.Second, "every sample's Ready condition", func() error {
		for i, name := range names {
			p := &pairs[i]
			if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p); err != nil {
				t.Fatal(err)
			}
			ready := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairReady))
			if ready == nil || ready.ObservedGeneration != p.Generation {
				return fmt.Errorf("%s: no Ready condition for generation %d; conditions %+v", name, p.Generation, p.Status.Conditions)
			}
		}
		return nil
	}, poll.Every(200*time.Millisecond))
	for i, name := range names {
		p := pairs[i]
		compatible := meta.FindStatusCondition(p.Status.Conditions, string(pdv1.PDPairLayoutCompatible))
		if compatible == nil {
			t.Errorf("%s: Ready is set but LayoutCompatible is missing", name)
			continue
		}
		wantStatus, wantReason := metav1.ConditionTrue, pdv1.PDPairConditionReason("")
		if strings.HasPrefix(name, "incompatible-") {
			wantStatus, wantReason = metav1.ConditionFalse, pdv1.ReasonUnitSizeMismatch
		}
		if compatible.Status != wantStatus || (wantReason != "" && compatible.Reason != string(wantReason)) {
			t.Errorf("%s: LayoutCompatible %s/%s (%s), want %s %s", name, compatible.Status, compatible.Reason, compatible.Message, wantStatus, wantReason)
		}
		if got := meta.IsStatusConditionTrue(p.Status.Conditions, string(pdv1.PDPairReady)); got != (wantStatus == metav1.ConditionTrue) {
			t.Errorf("%s: Ready is %v, want %v", name, got, wantStatus == metav1.ConditionTrue)
		}
	}
}

// checkLiveTable runs the live table until it shows every sample.
func checkLiveTable(t *testing.T, s *Session, names []string) {
	t.Helper()
	var out syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		NewLiveTable(s.Client(), &out, "header").Run(ctx)
		close(done)
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("live table did not stop within 10s of its context ending")
		}
	}()
	testutil.Eventually(t, 20*time.Second, "the live table showing every sample", func() error {
		text := out.String()
		for _, n := range names {
			if !strings.Contains(text, n) {
				return fmt.Errorf("no %s; it printed:\n%s", n, text)
			}
		}
		return nil
	}, poll.Every(100*time.Millisecond))
}

// processesMentioning lists the pids whose command line contains s.
func processesMentioning(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		// Arguments end in NUL; paths inside s continue with "/".
		if err == nil && (bytes.Contains(cmdline, []byte(s+"\x00")) || bytes.Contains(cmdline, []byte(s+"/"))) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func hostPort(t *testing.T, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// checkDecodeDemo: the sample decode pod went through the manager's webhook
// on the local CA and URL client config, and came back with the sidecar.
func checkDecodeDemo(ctx context.Context, t *testing.T, s *Session, c client.Client) {
	t.Helper()
	if len(s.Demos) != 2 {
		t.Fatalf("%d sample decode pods, want 2 (v1 and cache-contract)", len(s.Demos))
	}
	for _, d := range s.Demos {
		checkDecodePod(ctx, t, s, c, d)
	}
}

func checkDecodePod(ctx context.Context, t *testing.T, s *Session, c client.Client, d *Demo) {
	t.Helper()
	if d.DecodeErr != nil || d.Decode == nil {
		t.Fatalf("the sample decode pod %s was not shown: %v", d.File, d.DecodeErr)
	}
	var pod corev1.Pod
	if err := c.Get(ctx, client.ObjectKeyFromObject(d.Decode.Pod), &pod); err != nil {
		t.Fatal(err)
	}
	agent := 0
	for _, ic := range pod.Spec.InitContainers {
		if ic.Name == pdv1.AgentContainerName && ic.Image == s.opts.AgentImage {
			agent++
		}
	}
	if agent != 1 || pod.Annotations[pdv1.AnnotationInjected] != "first=0,count=4" {
		t.Errorf("stored decode pod: init containers %+v, annotations %v; want the agent (image %s) serving ranks 0..3",
			pod.Spec.InitContainers, pod.Annotations, s.opts.AgentImage)
	}
	if !strings.Contains(d.Decode.Summary(), "stays Pending") {
		t.Errorf("summary %q does not say why the pod stays Pending", d.Decode.Summary())
	}
}

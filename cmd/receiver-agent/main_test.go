package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pdtopo/pdtopo/internal/prefillpeer"
	"github.com/pdtopo/pdtopo/internal/receiverfixtures"
	"github.com/pdtopo/pdtopo/internal/receivertest"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

func writePlanFile(t *testing.T, l transferplan.Layout) string {
	t.Helper()
	b, err := json.Marshal(receiverfixtures.MustPlan(l))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFlagsNeedOnePlanSourceAndARank(t *testing.T) {
	cases := map[string][]string{
		"no rank":          {"--plan-file", "x"},
		"no source":        {"--engine-rank", "0"},
		"two sources":      {"--engine-rank", "0", "--plan-file", "x", "--plan-dir", "y"},
		"pdpair alone":     {"--engine-rank", "0", "--pdpair", "ns/n"},
		"bad timeout":      {"--engine-rank", "0", "--plan-file", "x", "--waiting-timeout", "0s"},
		"stray argument":   {"--engine-rank", "0", "--plan-file", "x", "extra"},
		"unknown flag":     {"--engine-rank", "0", "--plan-file", "x", "--nope"},
		"heartbeat misses": {"--engine-rank", "0", "--plan-file", "x", "--heartbeat-misses", "0"},
	}
	for name, args := range cases {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%s: %v accepted", name, args)
		}
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "10.1.2.3:80", ":0", "example.com:80", "unix:"} {
		if ln, err := listen(addr); err == nil {
			ln.Close()
			t.Errorf("listen %q accepted", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:0", "unix:" + filepath.Join(t.TempDir(), "api.sock")} {
		ln, err := listen(addr)
		if err != nil {
			if strings.Contains(addr, "::1") { // hosts without IPv6 loopback
				continue
			}
			t.Fatalf("listen %q: %v", addr, err)
		}
		ln.Close()
	}
	notSocket := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notSocket, nil, 0o644)
	if _, err := listen("unix:" + notSocket); err == nil {
		t.Fatal("listen replaced a regular file")
	}
}

func TestPrintPlan(t *testing.T) {
	l := receiverfixtures.FragmentedP8D4()
	path := writePlanFile(t, l)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--engine-rank", "6", "--plan-file", path, "--print-plan"}, &out, io.Discard); err == nil {
		t.Fatal("engine rank 6 of a 4-rank decode fleet printed a plan")
	}
	out.Reset()
	if err := run(context.Background(), []string{"--engine-rank", "2", "--plan-file", path, "--print-plan"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(receiverfixtures.MustPlan(l).Plans[2])
	if got := strings.TrimSpace(out.String()); got != string(want) {
		t.Fatalf("printed %s\nwant %s", got, want)
	}
}

// startAgent runs the agent's main loop until the test ends; it returns an
// HTTP client and base URL for its local API.
func startAgent(t *testing.T, args ...string) (*http.Client, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "agent.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append(args, "--listen", "unix:"+sock, "--log-level", "warn"), io.Discard, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get("http://agent/healthz")
		if err == nil {
			resp.Body.Close()
			return client, "http://agent"
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent never answered: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func call(t *testing.T, c *http.Client, method, url, body string, want int) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, raw, want)
	}
	out := map[string]any{}
	json.Unmarshal(raw, &out)
	return out
}

// engineBody registers an engine matching the layout's decode buffers.
func engineBody(t *testing.T, l transferplan.Layout, rank int) string {
	info := receivertest.Engine(receivertest.Snapshot(t, l, rank), rank)
	b, _ := json.Marshal(map[string]any{"sessionId": info.SessionID, "kvDataPtrs": info.KVDataPtrs})
	return string(b)
}

// settled polls a room until it left Bootstrapping and returns it.
func settled(t *testing.T, c *http.Client, base string, room int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := call(t, c, "GET", fmt.Sprintf("%s/v1/rooms/%d", base, room), "", 200)
		if got["status"] != "Bootstrapping" || time.Now().After(deadline) {
			return got
		}
		time.Sleep(time.Millisecond)
	}
}

// roomThroughAPI runs one room through the agent's API and returns its final answer.
func roomThroughAPI(t *testing.T, c *http.Client, base, bootstrap string, room int) map[string]any {
	t.Helper()
	call(t, c, "POST", base+"/v1/rooms", fmt.Sprintf(`{"bootstrapAddr":%q,"room":%d}`, bootstrap, room), 201)
	settled(t, c, base, room)
	call(t, c, "POST", fmt.Sprintf("%s/v1/rooms/%d/request", base, room), `{"kvIndices":[1,2],"auxIndex":0,"decodePrefixLen":0}`, 202)
	return call(t, c, "GET", fmt.Sprintf("%s/v1/rooms/%d?wait=10s", base, room), "", 200)
}

func TestAgentWithPlanFile(t *testing.T) {
	l := receiverfixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(t, l, nil)
	peer.Script(77, prefillpeer.Success(5))
	c, base := startAgent(t, "--engine-rank", "1", "--plan-file", writePlanFile(t, l))
	call(t, c, "PUT", base+"/v1/engine", engineBody(t, l, 1), 200)
	if got := roomThroughAPI(t, c, base, peer.BootstrapAddr(), 77); got["status"] != "Success" || got["bootstrapToken"] != float64(5) {
		t.Fatalf("room 77: %v", got)
	}
	call(t, c, "DELETE", base+"/v1/rooms/77", "", 204)
	// decode rank 1 pulls from prefill ranks 2 and 3: two statuses applied,
	// one room succeeded, none open after the clear, nothing rejected.
	wantMetrics(t, c, base+"/metrics", map[string]float64{
		`pdtopo_receiver_rooms_total{outcome="success"}`:     1,
		`pdtopo_receiver_rooms_total{outcome="failed"}`:      0,
		`pdtopo_receiver_rooms_total{outcome="abandoned"}`:   0,
		`pdtopo_receiver_status_messages_total`:              2,
		`pdtopo_receiver_status_messages_rejected_total`:     0,
		`pdtopo_receiver_open_rooms`:                         0,
		`pdtopo_receiver_room_open_to_success_seconds_count`: 1,
	})
}

// wantMetrics scrapes url (Prometheus text format) and checks each series:
// name{label="value",...} → value; a name without labels is the sum over
// its series (0 when it has none yet).
func wantMetrics(t *testing.T, c *http.Client, url string, want map[string]float64) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: not the Prometheus text format: %v", url, err)
	}
	got := map[string]float64{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
			if h := m.GetHistogram(); h != nil {
				got[name+"_count"] += float64(h.GetSampleCount())
			}
			got[name] += v
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			if len(labels) > 0 {
				got[name+"{"+strings.Join(labels, ",")+"}"] = v
			}
		}
	}
	for series, w := range want {
		if !strings.Contains(series, "{") && !strings.HasSuffix(series, "_count") {
			if _, ok := families[series]; !ok && w != 0 {
				t.Errorf("%s: no such metric", series)
			}
		}
		if got[series] != w {
			t.Errorf("%s = %v, want %v", series, got[series], w)
		}
	}
}

// projectPlans writes a PDPair's published ConfigMaps the way the kubelet
// projects them: files are symlinks into ..data, a symlink to a
// timestamped directory that is swapped atomically on update.
func projectPlans(t *testing.T, dir string, l transferplan.Layout, generation int) {
	t.Helper()
	objects, err := planstore.Encode("pair", receiverfixtures.MustPlan(l))
	if err != nil {
		t.Fatal(err)
	}
	ts := fmt.Sprintf("..2026_01_01_%06d", generation)
	os.MkdirAll(filepath.Join(dir, ts), 0o755)
	for _, o := range objects {
		for k, v := range o.Data {
			os.WriteFile(filepath.Join(dir, ts, k), []byte(v), 0o644)
		}
		for k, v := range o.BinaryData {
			os.WriteFile(filepath.Join(dir, ts, k), v, 0o644)
		}
		for k := range o.Data {
			os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k))
		}
		for k := range o.BinaryData {
			os.Symlink(filepath.Join("..data", k), filepath.Join(dir, k))
		}
	}
	tmp := filepath.Join(dir, "..data_tmp")
	os.Remove(tmp)
	if err := os.Symlink(ts, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func TestAgentFollowsProjectedConfigMaps(t *testing.T) {
	dir := t.TempDir()
	old := receiverfixtures.FragmentedP8D4()
	oldPeer := receivertest.StartPeer(t, old, nil)
	projectPlans(t, dir, old, 1)
	c, base := startAgent(t, "--engine-rank", "0", "--plan-dir", dir, "--plan-poll-interval", "20ms")
	call(t, c, "PUT", base+"/v1/engine", engineBody(t, old, 0), 200)
	if got := roomThroughAPI(t, c, base, oldPeer.BootstrapAddr(), 1); got["status"] != "Success" {
		t.Fatalf("room 1 with the first plans: %v", got)
	}
	// the PDPair changes to P4→D4 identity (same decode buffers); the agent
	// must follow the swap and refuse the old P8 prefill as a mismatch
	next := receiverfixtures.MHA(4, 4, receiverfixtures.Buffers(2, 256, 256, 128))
	projectPlans(t, dir, next, 2)
	deadline := time.Now().Add(10 * time.Second)
	for {
		call(t, c, "POST", base+"/v1/rooms", fmt.Sprintf(`{"bootstrapAddr":%q,"room":%d}`, oldPeer.BootstrapAddr(), 2), 201)
		got := settled(t, c, base, 2)
		call(t, c, "DELETE", base+"/v1/rooms/2", "", 204)
		if got["failureCode"] == "LayoutMismatch" {
			if !strings.Contains(got["failureReason"].(string), "prefill_tp_size is 8, the plan was made for prefill tensorParallelSize 4") {
				t.Fatalf("mismatch reason: %v", got["failureReason"])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not pick up the new plans: %v", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	newPeer := receivertest.StartPeer(t, next, nil)
	if got := roomThroughAPI(t, c, base, newPeer.BootstrapAddr(), 3); got["status"] != "Success" {
		t.Fatalf("room 3 with the new plans: %v", got)
	}
}

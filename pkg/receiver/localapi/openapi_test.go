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

package localapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

const openAPIPath = "../../../docs/agent-api.openapi.yaml"

// openAPI is the parsed document, as generic JSON values.
type openAPI map[string]any

func loadOpenAPI(t *testing.T) openAPI {
	t.Helper()
	raw, err := os.ReadFile(openAPIPath)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", openAPIPath, err)
	}
	var doc openAPI
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// resolve follows a local $ref.
func (d openAPI) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = map[string]any(d)
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[part]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// on reports whether a path item is served by the probe address and/or a
// rank's socket: items without servers are the engine API's.
func onServers(item map[string]any) (engine, probe bool) {
	servers, ok := item["servers"].([]any)
	if !ok {
		return true, false
	}
	for _, s := range servers {
		if strings.Contains(s.(map[string]any)["url"].(string), ":9440") {
			probe = true
		} else {
			engine = true
		}
	}
	return engine, probe
}

var httpMethods = []string{"get", "put", "post", "delete", "patch"}

// routes is the documented path → methods of one server.
func (d openAPI) routes(probe bool) map[string][]string {
	out := map[string][]string{}
	for path, v := range d["paths"].(map[string]any) {
		item := v.(map[string]any)
		e, p := onServers(item)
		if probe && !p || !probe && !e {
			continue
		}
		for _, m := range httpMethods {
			if _, ok := item[m]; ok {
				out[path] = append(out[path], strings.ToUpper(m))
			}
		}
		slices.Sort(out[path])
	}
	return out
}

// response is the documented response of an operation, or nil.
func (d openAPI) response(path, method string, status int) map[string]any {
	op, _ := d["paths"].(map[string]any)[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return nil
	}
	return d.resolve(op["responses"].(map[string]any)[fmt.Sprint(status)])
}

// checkBody checks a JSON value against a documented schema's field names:
// every field is documented, every required field is there, recursively.
func (d openAPI) checkBody(schema map[string]any, v any, where string) []string {
	schema = d.resolve(schema)
	var problems []string
	switch schema["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %v is not an object", where, v)}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, fv := range obj {
			ps, ok := props[k]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: field %q is not documented", where, k))
				continue
			}
			problems = append(problems, d.checkBody(ps.(map[string]any), fv, where+"."+k)...)
		}
		req, _ := schema["required"].([]any)
		for _, r := range req {
			if _, ok := obj[r.(string)]; !ok {
				problems = append(problems, fmt.Sprintf("%s: required field %q is missing", where, r))
			}
		}
	case "array":
		if v == nil && schema["nullable"] == true {
			return nil
		}
		if _, ok := v.([]any); !ok {
			problems = append(problems, fmt.Sprintf("%s: %v is not an array", where, v))
		}
	case "string":
		if _, ok := v.(string); !ok && !(v == nil && schema["nullable"] == true) {
			problems = append(problems, fmt.Sprintf("%s: %v is not a string", where, v))
		}
		if enum, ok := schema["enum"].([]any); ok && v != nil && !slices.Contains(enum, v) {
			problems = append(problems, fmt.Sprintf("%s: %v is not one of %v", where, v, enum))
		}
	case "integer", "number":
		if _, ok := v.(float64); !ok {
			problems = append(problems, fmt.Sprintf("%s: %v is not a number", where, v))
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			problems = append(problems, fmt.Sprintf("%s: %v is not a boolean", where, v))
		}
	}
	return problems
}

// exchange is one call the servers answered.
type exchange struct {
	server, pattern, method string
	status                  int
	contentType             string
	body                    []byte
}

// recorder wraps a server's handler and records every exchange with the
// route pattern the mux matched.
type recorder struct {
	server string
	h      http.Handler
	log    *[]exchange
}

type capture struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (c *capture) WriteHeader(s int)           { c.status = s; c.ResponseWriter.WriteHeader(s) }
func (c *capture) Write(b []byte) (int, error) { c.body.Write(b); return c.ResponseWriter.Write(b) }

// Hijack records the engine stream's 101, which goes out on the taken-over
// connection rather than through WriteHeader.
func (c *capture) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c.status = http.StatusSwitchingProtocols
	return http.NewResponseController(c.ResponseWriter).Hijack()
}

func (rec recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c := &capture{ResponseWriter: w, status: http.StatusOK}
	rec.h.ServeHTTP(c, r)
	logMu.Lock()
	defer logMu.Unlock()
	*rec.log = append(*rec.log, exchange{server: rec.server, pattern: r.Pattern, method: r.Method, status: c.status, contentType: w.Header().Get("Content-Type"), body: c.body.Bytes()})
}

// logMu guards the exchange log: a stream's handler ends after its call.
var logMu sync.Mutex

// fixedPod is a pod whose readiness and info the test sets.
type fixedPod struct {
	ready     error
	info      AgentInfo
	contracts map[int][]byte
}

func (p fixedPod) Info() AgentInfo                { return p.info }
func (p fixedPod) Readiness() error               { return p.ready }
func (p fixedPod) EngineContract(rank int) []byte { return p.contracts[rank] }

// TestOpenAPIDocumentMatchesTheServers drives both servers through every
// answer the document lists and checks, both ways, the paths, methods and
// status codes, and every answer's fields against the documented schema.
func TestOpenAPIDocumentMatchesTheServers(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, c := range []struct {
		name   string
		probe  bool
		server map[string][]string
	}{{"engine", false, EngineRoutes()}, {"probe", true, ProbeRoutes()}} {
		if got := doc.routes(c.probe); fmt.Sprint(got) != fmt.Sprint(c.server) {
			t.Errorf("%s routes: the document lists %v, the server answers %v", c.name, got, c.server)
		}
	}

	var log []exchange
	l := fixtures.FragmentedP8D4()
	peer := receivertest.StartPeer(t, l, nil)
	peer.Script(1, prefillpeer.Success(9))
	snap := receivertest.Snapshot(t, l, 0)
	m, reg := receivertest.StartAgent(t, &snap, 0, nil)
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	engine := httptest.NewServer(recorder{"engine", Handler(m, metrics), &log})
	defer engine.Close()
	bare, _ := receivertest.StartAgent(t, nil, 0, nil) // no plan yet
	bareSrv := httptest.NewServer(recorder{"engine", Handler(bare, metrics), &log})
	defer bareSrv.Close()
	contracts := map[int][]byte{1: []byte(`{"plan":{}}`)}
	info := AgentInfo{PlanHash: snap.Hash, PDPair: "pair", Ranks: []int{0, 1}, Ready: true, PlanLoadedAt: "2026-01-01T00:00:00Z",
		EngineContracts: EngineContracts([]int{0, 1}, func(r int) []byte { return contracts[r] })}
	probe := httptest.NewServer(recorder{"probe", ProbeHandler(fixedPod{info: info, contracts: contracts}, metrics), &log})
	defer probe.Close()
	unready := httptest.NewServer(recorder{"probe", ProbeHandler(fixedPod{ready: bare.Readiness()}, metrics), &log})
	defer unready.Close()
	gone, _ := receivertest.StartAgent(t, &snap, 0, nil)
	gone.Close() // shutting down
	goneSrv := httptest.NewServer(recorder{"engine", Handler(gone, metrics), &log})
	defer goneSrv.Close()

	do := func(base, method, path, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if path == "/v1/engine/stream" && body != "" {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", StreamProtocol)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusSwitchingProtocols { // the stream: read its hello, then close it
			line, _ := bufio.NewReader(resp.Body).ReadString('\n')
			if !strings.HasPrefix(line, `{"ev":"hello"`) {
				t.Errorf("the stream's first line: %q", line)
			}
		} else {
			_, _ = io.Copy(io.Discard, resp.Body) // drained only to reuse the connection
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d", method, path, resp.StatusCode, want)
		}
	}
	eng := receivertest.Engine(snap, 0)
	engineJSON, _ := json.Marshal(map[string]any{"sessionId": eng.SessionID, "kvDataPtrs": eng.KVDataPtrs})
	contractJSON := contractEngineBody(fixtures.LoadContractPair(t, "gqa-p4-d2").DecodeContract) // not this plan's wire
	open := fmt.Sprintf(`{"bootstrapAddr":%q,"room":1}`, peer.BootstrapAddr())
	request := `{"kvIndices":[1,2],"auxIndex":0}`
	huge := `{"x":"` + strings.Repeat("a", MaxBodyBytes) + `"}`
	e, b := engine.URL, bareSrv.URL
	for _, c := range []struct {
		base, method, path, body string
		want                     int
	}{
		{e, "GET", "/healthz", "", 200}, {e, "GET", "/readyz", "", 200}, {e, "GET", "/metrics", "", 200},
		{b, "GET", "/readyz", "", 503},
		{e, "POST", "/v1/rooms", open, 409}, // before PUT /v1/engine
		{e, "PUT", "/v1/engine", `{"kvDataPtrs":[1]}`, 400},
		{e, "PUT", "/v1/engine", huge, 413},
		{e, "PUT", "/v1/engine", string(engineJSON), 200},
		{e, "PUT", "/v1/engine", contractJSON, 409},
		{e, "POST", "/v1/engine/stream", contractJSON, 409},
		{b, "PUT", "/v1/engine", string(engineJSON), 200},
		{b, "POST", "/v1/rooms", open, 503}, // no plan
		{e, "POST", "/v1/rooms", `{"room":1}`, 400},
		{e, "POST", "/v1/rooms", huge, 413},
		{e, "POST", "/v1/rooms", open, 201},
		{e, "POST", "/v1/rooms/1/request", `{"auxIndex":0}`, 400},
		{e, "POST", "/v1/rooms/1/request", huge, 413},
		{e, "POST", "/v1/rooms/99/request", request, 404},
		{e, "POST", "/v1/rooms/1/request", request, 202},
		{e, "POST", "/v1/rooms/1/request", request, 409},
		{e, "GET", "/v1/rooms/1?wait=10s", "", 200},
		{e, "GET", "/v1/rooms/1?wait=forever", "", 400},
		{e, "GET", "/v1/rooms/99", "", 404},
		{e, "DELETE", "/v1/rooms/x", "", 400},
		{e, "DELETE", "/v1/rooms/1", "", 204},
		{e, "DELETE", "/v1/rooms/1", "", 404},
		{e, "GET", "/v2/nothing", "", 404},
		{e, "POST", "/v1/engine/stream", "", 426}, // no upgrade asked
		{e, "POST", "/v1/engine/stream", `{"kvDataPtrs":[1]}`, 400},
		{e, "POST", "/v1/engine/stream", huge, 413},
		{goneSrv.URL, "POST", "/v1/engine/stream", string(engineJSON), 503},
		{e, "POST", "/v1/engine/stream", string(engineJSON), 101},
		{probe.URL, "GET", "/healthz", "", 200}, {probe.URL, "GET", "/readyz", "", 200},
		{probe.URL, "GET", "/metrics", "", 200}, {probe.URL, "GET", "/v1/agent", "", 200},
		{unready.URL, "GET", "/readyz", "", 503}, {probe.URL, "GET", "/v1/rooms", "", 404},
		{probe.URL, "GET", "/v1/agent/contract?rank=1", "", 200}, {probe.URL, "GET", "/v1/agent/contract?rank=0", "", 404},
		{probe.URL, "GET", "/v1/agent/contract?rank=-1", "", 400},
	} {
		do(c.base, c.method, c.path, c.body, c.want)
	}
	for _, s := range []struct {
		base   string
		routes map[string][]string
	}{{e, EngineRoutes()}, {probe.URL, ProbeRoutes()}} {
		for path := range s.routes {
			do(s.base, "PATCH", strings.ReplaceAll(path, "{room}", "1"), "", 405)
		}
	}

	// The stream's handler logs once its connection closed; without that
	// line the check below fails on the stream's status.
	_ = poll.Until(10*time.Second, func() error {
		if !loggedStatus(&log, http.StatusSwitchingProtocols) {
			return fmt.Errorf("no %d logged", http.StatusSwitchingProtocols)
		}
		return nil
	})
	logMu.Lock()
	defer logMu.Unlock()
	documented := map[string]bool{} // server path method status
	for path, v := range doc["paths"].(map[string]any) {
		item := v.(map[string]any)
		onEngine, onProbe := onServers(item)
		for _, m := range httpMethods {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			for status := range op["responses"].(map[string]any) {
				for server, on := range map[string]bool{"engine": onEngine, "probe": onProbe} {
					if on {
						documented[fmt.Sprintf("%s %s %s %s", server, path, strings.ToUpper(m), status)] = true
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, x := range log {
		if x.pattern == "/" { // a path no route has: the generic 404
			var body ErrorBody
			if x.status != 404 || json.Unmarshal(x.body, &body) != nil || body.Error.Code != CodeNoSuchEndpoint {
				t.Errorf("%s %s on an unknown path answered %d %s", x.server, x.method, x.status, x.body)
			}
			continue
		}
		methods := []string{x.method}
		if x.status == http.StatusMethodNotAllowed { // documented on each operation of the path
			methods = doc.routes(x.server == "probe")[x.pattern]
		}
		for _, m := range methods {
			key := fmt.Sprintf("%s %s %s %d", x.server, x.pattern, m, x.status)
			seen[key] = true
			if !documented[key] {
				t.Errorf("%s answered but is not documented", key)
				continue
			}
			resp := doc.response(x.pattern, m, x.status)
			content, _ := resp["content"].(map[string]any)
			if len(content) == 0 {
				if len(x.body) != 0 {
					t.Errorf("%s: documented without a body, answered %s", key, x.body)
				}
				continue
			}
			if js, ok := content["application/json"].(map[string]any); ok {
				var v any
				if err := json.Unmarshal(x.body, &v); err != nil || !strings.HasPrefix(x.contentType, "application/json") {
					t.Errorf("%s: not JSON (%s): %s", key, x.contentType, x.body)
					continue
				}
				for _, p := range doc.checkBody(js["schema"].(map[string]any), v, key) {
					t.Error(p)
				}
			} else if _, ok := content["text/plain"]; ok && !strings.HasPrefix(x.contentType, "text/plain") {
				t.Errorf("%s: documented as text/plain, answered %s", key, x.contentType)
			}
		}
	}
	var missing []string
	for key := range documented {
		if !seen[key] {
			missing = append(missing, key)
		}
	}
	sort.Strings(missing)
	for _, key := range missing {
		t.Errorf("%s is documented but no call produced it", key)
	}
}

func loggedStatus(log *[]exchange, status int) bool {
	logMu.Lock()
	defer logMu.Unlock()
	for _, x := range *log {
		if x.status == status {
			return true
		}
	}
	return false
}

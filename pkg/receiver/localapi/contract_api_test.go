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
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/prefillpeer"
	"github.com/pdtopo/pdtopo/test/receivertest"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/poll"
)

// contractRig is a real agent for decode rank 0 of a contract pair (GQA, 2
// KV heads on 8 prefill ranks: rank 0 has one source and six idle ranks it
// meets), its engine API over loopback HTTP and on a unix socket, against
// the contract-era prefill peer.
type contractRig struct {
	*apiPair
	pair   fixtures.ContractPair
	socket string
}

func newContractRig(t *testing.T) *contractRig {
	pair := fixtures.LoadContractPair(t, "gqa-replicas-p8-d2")
	peer := receivertest.StartContractPeer(t, pair, nil)
	peer.SetDefault(prefillpeer.Success(31))
	snap, err := receiver.SnapshotFor(pair.Plan(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	m, reg := receivertest.StartAgent(t, &snap, 0, nil)
	api := Handler(m, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	r := &contractRig{apiPair: &apiPair{t: t, url: srv.URL, peer: peer, snap: snap}, pair: pair}
	r.socket = filepath.Join(t.TempDir(), "rank-0.sock")
	ln, err := net.Listen("unix", r.socket)
	if err != nil {
		t.Fatal(err)
	}
	us := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = us.Serve(ln) }()
	t.Cleanup(func() { us.Close() })
	return r
}

// contractEngineBody is the registration of kind contract, the contract
// written into the body as the engine's bytes.
func contractEngineBody(contract []byte) string {
	info := receivertest.ContractEngine(fixtures.ContractPair{}, 0)
	return fmt.Sprintf(`{"kind":"contract","sessionId":%q,"kvDataPtr":%d,"cacheLayout":%s}`, info.SessionID, info.ArenaPtr, contract)
}

func contractRequestBody(manifest []byte) string {
	return `{"kind":"contract","manifest":` + string(manifest) + `}`
}

func (r *contractRig) waitFinished(room int) RoomBody {
	r.t.Helper()
	var b RoomBody
	r.do("GET", fmt.Sprintf("/v1/rooms/%d?wait=10s", room), "", http.StatusOK, &b)
	return b
}

// The engine registers its arena and contract, opens rooms and sends their
// manifests as JSON values; the agent forwards the manifest's bytes
// unchanged, the rooms complete with the prefill's token, and a manifest
// outside the decode arena is refused (400 ManifestRefused, the room
// Failed) with nothing sent.
func TestContractRoomsOverHTTP(t *testing.T) {
	r := newContractRig(t)
	var reg EngineRegistered
	r.do("PUT", "/v1/engine", contractEngineBody(r.pair.DecodeContract), http.StatusOK, &reg)
	r.do("POST", "/v1/rooms", r.openBody(1), http.StatusCreated, nil)
	spaced := r.pair.Refusal(t, "spaces and reordered keys").Wire // the engine's bytes go as they are
	r.do("POST", "/v1/rooms/1/request", contractRequestBody(spaced), http.StatusAccepted, nil)
	if b := r.waitFinished(1); b.Status != "Success" || b.BootstrapToken != 31 {
		t.Fatalf("room 1: %+v, want Success with token 31", b)
	}
	r.do("POST", "/v1/rooms", r.openBody(2), http.StatusCreated, nil)
	msg := r.expectError("POST", "/v1/rooms/2/request", contractRequestBody(r.pair.Refusal(t, "block id = page_count").Wire), http.StatusBadRequest, string(receiver.CodeManifestRefused))
	for _, part := range []string{"ManifestBlockOutsideArena", "block id 64", "[1, 64)"} {
		if !strings.Contains(msg, part) {
			t.Fatalf("refusal %q does not say %q", msg, part)
		}
	}
	if b := r.waitFinished(2); b.Status != "Failed" || b.FailureCode == nil || *b.FailureCode != string(receiver.ReasonManifestRefused) {
		t.Fatalf("room 2: %+v, want Failed with ManifestRefused", b)
	}
	r.expectError("POST", "/v1/rooms/2/request", contractRequestBody(r.pair.Manifests[0]), http.StatusConflict, string(receiver.CodeRoomFinished))
	r.do("POST", "/v1/rooms", r.openBody(3), http.StatusCreated, nil)
	r.expectError("POST", "/v1/rooms/3/request", `{"kvIndices":[1],"auxIndex":0}`, http.StatusConflict, string(receiver.CodeWireMismatch))
	source := r.peer.RankOf(0, 0)
	for _, p := range source.PreAllocations() {
		if p.Room == 2 {
			t.Fatalf("the source got a pre-allocation of room 2, whose manifest was refused")
		}
	}
	if got := source.Counts().Requests; got != 1 {
		t.Fatalf("the source got %d pre-allocations, want 1 (room 1's)", got)
	}
}

// Registrations and requests of kind contract that are not the expected
// JSON are refused with the field named, before the agent acts on them.
func TestContractBodiesRefused(t *testing.T) {
	r := newContractRig(t)
	good := contractEngineBody(r.pair.DecodeContract)
	for name, c := range map[string]struct {
		body   string
		status int
		code   string
		part   string
	}{
		"no arena":           {strings.Replace(good, `"kvDataPtr"`, `"other"`, 1), 400, CodeBadRequestBody, "other"},
		"a string contract":  {strings.Replace(good, `"cacheLayout":{`, `"cacheLayout":"{`, 1) + `"`, 400, CodeBadRequestBody, ""},
		"a list contract":    {`{"kind":"contract","sessionId":"127.0.0.1:1","kvDataPtr":1,"cacheLayout":[1]}`, 400, CodeBadRequestBody, "cacheLayout"},
		"null contract":      {`{"kind":"contract","sessionId":"127.0.0.1:1","kvDataPtr":1,"cacheLayout":null}`, 400, CodeBadRequestBody, "cacheLayout"},
		"no contract":        {`{"kind":"contract","sessionId":"127.0.0.1:1","kvDataPtr":1}`, 400, CodeBadRequestBody, "cacheLayout"},
		"v1 keys":            {strings.Replace(good, `"kvDataPtr"`, `"kvDataPtrs":[1],"kvDataPtr"`, 1), 400, CodeBadRequestBody, "kvDataPtrs"},
		"oversized contract": {contractEngineBody([]byte(`{"x":"` + strings.Repeat("a", 256<<10) + `"}`)), 400, CodeBadRequestBody, "262144"},
		"another kind":       {strings.Replace(good, `"contract"`, `"v3"`, 1), 400, CodeBadRequestBody, `"v3"`},
		"not the plan's":     {contractEngineBody(r.pair.PrefillContract), 409, string(receiver.CodeContractMismatch), "decodeContractSHA256"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := r.expectError("PUT", "/v1/engine", c.body, c.status, c.code)
			if !strings.Contains(msg, c.part) {
				t.Fatalf("%q does not name %q", msg, c.part)
			}
		})
	}
	r.do("PUT", "/v1/engine", good, http.StatusOK, nil)
	huge := `{"groups":[],"pad":"` + strings.Repeat("a", kvcontract.MaxManifestBytes) + `"}`
	room := 0
	for name, c := range map[string]struct {
		body, code, part string
	}{
		"no manifest":                     {`{"kind":"contract"}`, CodeBadRequestBody, "manifest"},
		"oversized manifest":              {contractRequestBody([]byte(huge)), CodeBadRequestBody, fmt.Sprint(kvcontract.MaxManifestBytes)},
		"keys reordered, a list manifest": {`{"manifest":[1],"kind":"contract"}`, CodeBadRequestBody, "manifest"},
		// the clients' form: the manifest is the Manager's to read
		"a list manifest":   {`{"kind":"contract","manifest":[1]}`, string(receiver.CodeManifestRefused), "MalformedJSON"},
		"a string manifest": {`{"kind":"contract","manifest":"{}"}`, string(receiver.CodeManifestRefused), "MalformedJSON"},
		"not JSON":          {`{"kind":"contract","manifest":{"groups":[}`, string(receiver.CodeManifestRefused), "MalformedJSON"},
		"a key after it":    {`{"kind":"contract","manifest":{},"kvIndices":[1]}`, string(receiver.CodeManifestRefused), "16 bytes follow the manifest's object"},
	} {
		t.Run(name, func(t *testing.T) {
			room++
			r.do("POST", "/v1/rooms", r.openBody(room), http.StatusCreated, nil)
			msg := r.expectError("POST", fmt.Sprintf("/v1/rooms/%d/request", room), c.body, 400, c.code)
			if !strings.Contains(msg, c.part) {
				t.Fatalf("%q does not name %q", msg, c.part)
			}
		})
	}
}

// The stream carries the contract registration as its handshake and the
// manifests in its request operations; the refusal of a manifest comes
// back as a refused event and the room's Failed event.
func TestContractRoomsOnTheStream(t *testing.T) {
	r := newContractRig(t)
	s := openRawStreamBody(t, r.socket, []byte(contractEngineBody(r.pair.DecodeContract)))
	addr := r.peer.BootstrapAddr()
	s.send(openOp(1, 1, addr), requestOp(1, 1, contractRequestBody(r.pair.Manifests[0])),
		openOp(2, 2, addr), requestOp(2, 2, contractRequestBody(r.pair.Refusal(t, "null block id 0").Wire)),
		// a manifest that is not JSON fails its room, not the stream
		openOp(3, 3, addr), requestOp(3, 3, contractRequestBody(r.pair.Refusal(t, "not JSON").Wire)),
		openOp(4, 4, addr), requestOp(4, 4, contractRequestBody(r.pair.Manifests[0])))
	tab := roomTable{}
	var refused StreamEvent
	testutil.Eventually(t, 10*time.Second, "every room's last event and the refusal", func() error {
		ev := s.next() // waits for the event itself
		tab.apply(ev)
		if ev.Ev == EvRefused && refused.Ev == "" {
			refused = ev
		}
		if ev.Ev == EvClosed {
			t.Fatalf("the stream ended: %+v", ev)
		}
		if done(tab, 1) && done(tab, 2) && done(tab, 3) && done(tab, 4) && refused.Ev != "" {
			return nil
		}
		return fmt.Errorf("rooms %+v, refused %+v", tab, refused)
	}, poll.Every(0))
	if st := tab[1]; *st.Status != receiver.Success || st.BootstrapToken != 31 {
		t.Fatalf("room 1: %+v", st)
	}
	if st := tab[2]; *st.Status != receiver.Failed || *st.FailureCode != string(receiver.ReasonManifestRefused) || !strings.Contains(*st.FailureMessage, "ManifestBlockOutsideArena") {
		t.Fatalf("room 2: %+v", st)
	}
	if st := tab[3]; *st.Status != receiver.Failed || *st.FailureCode != string(receiver.ReasonManifestRefused) || !strings.Contains(*st.FailureMessage, "MalformedJSON") {
		t.Fatalf("room 3: %+v", st)
	}
	if st := tab[4]; *st.Status != receiver.Success {
		t.Fatalf("room 4, after a manifest that is not JSON: %+v", st)
	}
	if refused.Op != OpRequest || *refused.Room != 2 || refused.Code != string(receiver.CodeManifestRefused) || refused.HTTPStatus != http.StatusBadRequest {
		t.Fatalf("refusal: %+v", refused)
	}
}

func done(tab roomTable, room int64) bool {
	ev, ok := tab[room]
	return ok && ev.Status.Finished()
}

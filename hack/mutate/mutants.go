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

package main

import "strings"

// mutant is one deliberate bug: Old (which must occur exactly once in File)
// replaced by New, and the packages whose tests must catch it; Run, when
// set, narrows those tests to the ones matching it (go test -run), which
// keeps a mutant of a big package to the tests of its own feature.
type mutant struct {
	Name, File string
	Old, New   string
	Pkgs       []string
	Run        string
	Bug        string
}

// testArgs is the go test command line of m's tests.
func (m mutant) testArgs(flags ...string) []string {
	args := append([]string{"test", "-count=1"}, flags...)
	if m.Run != "" {
		args = append(args, "-run", m.Run)
	}
	return append(args, m.Pkgs...)
}

// tests names m's tests: its packages, and its -run pattern if any.
func (m mutant) tests() string {
	s := strings.Join(m.Pkgs, " ")
	if m.Run != "" {
		s += " -run " + m.Run
	}
	return s
}

var (
	planner      = []string{"./pkg/transferplan/..."}
	wire         = []string{"./pkg/kvwire/..."}
	store        = []string{"./pkg/planstore/..."}
	agent        = []string{"./pkg/receiver/..."}
	operator     = []string{"./controllers/..."}
	publishing   = []string{"./pkg/planstore/...", "./controllers/..."}
	chart        = []string{"./test/integration/chart/..."}
	chartRun     = []string{"./test/integration/chart/...", "./test/integration/manager/..."}
	model        = []string{"./pkg/modelgeom/...", "./pkg/modelplan/..."}
	agentOnly    = []string{"./pkg/receiver/"}
	wireOnly     = []string{"./pkg/kvwire/contract/"}
	contractOnly = []string{"./pkg/transferplan/contract/"}
	localAPI     = []string{"./pkg/receiver/localapi/"}
	zmqSock      = []string{"./pkg/zmqsock/"}
	client       = []string{"./pkg/receiver/agentclient/"}
	agentCmd     = []string{"./cmd/receiver-agent/"}
	sglangEngine = []string{"./pkg/engine/sglang/"}
	rolloutE2E   = []string{"./webhooks/"}
	localRollout = []string{"./internal/localcp/"}
)

// mutants: the first of each group are the bugs the test review found
// surviving (issue "Tests that fail when the code is wrong"); the rest are
// bugs of the same kinds elsewhere.
var mutants = []mutant{
	// pkg/transferplan
	{Name: "planner-middle-dst-half-unit", File: "pkg/transferplan/v1/fragmentwalk.go",
		Old:  "f.DstByteOffset = t*decRow + (from-s)*u\n",
		New:  "f.DstByteOffset = t*decRow + (from-s)*u + func() int64 { if from > s && to < e { return u / 2 }; return 0 }()\n",
		Pkgs: planner, Bug: "a half-unit shift of the destination offset of middle fragments"},
	{Name: "planner-src-offset-from-decode", File: "pkg/transferplan/v1/fragmentwalk.go",
		Old: "f.SrcByteOffset = t*preRow + (from-ps)*u", New: "f.SrcByteOffset = t*preRow + (from-s)*u",
		Pkgs: planner, Bug: "the source offset measured from the decode range's start"},
	{Name: "planner-identity-with-replicas", File: "pkg/transferplan/v1/planner.go",
		Old: "if p.prefillTP == p.decodeTP && p.noReplicaGroups() {", New: "if p.prefillTP == p.decodeTP {",
		Pkgs: planner, Bug: "identity plans for equal TP sizes even with replica groups"},
	{Name: "planner-no-idle-ranks", File: "pkg/transferplan/v1/planner.go",
		Old: "\t\tif n == 0 {\n\t\t\tidle = append(idle, r)", New: "\t\tif n < 0 {\n\t\t\tidle = append(idle, r)",
		Pkgs: planner, Bug: "idle prefill ranks not reported"},
	{Name: "planner-mla-no-dummies", File: "pkg/transferplan/v1/mla.go",
		Old: "IsDummy:            plan.TargetTPRank != nil && r != *plan.TargetTPRank,", New: "IsDummy:            false,",
		Pkgs: planner, Bug: "MLA targets beside the real one not marked dummy"},
	{Name: "planner-mla-dst-info-1", File: "pkg/transferplan/v1/mla.go",
		Old: "RequiredDstInfoNum: p.fanOut[r],", New: "RequiredDstInfoNum: 1,",
		Pkgs: planner, Bug: "MLA requiredDstInfoNum 1 even when several decode ranks share a prefill rank"},
	{Name: "planner-sharded-fan-out-doubled", File: "pkg/transferplan/v1/fragmentwalk.go",
		Old: "\t\t\t\tfan[r]++\n", New: "\t\t\t\tfan[r] += 2\n",
		Pkgs: planner, Bug: "a prefill rank's fan-out (requiredDstInfoNum) counted twice per decode rank"},
	{Name: "planner-replicated-source", File: "pkg/transferplan/v1/fragmentwalk.go",
		Old: "f.SrcRank, f.BytesPerPage = d*P/D, dec.ItemStrideBytes", New: "f.SrcRank, f.BytesPerPage = d%P, dec.ItemStrideBytes",
		Pkgs: planner, Bug: "a replicated buffer pulled from prefill rank d mod P instead of d*P/D"},

	// pkg/modelgeom, pkg/modelplan and the fixes of pkg/transferplan
	{Name: "model-no-head-replication", File: "pkg/modelgeom/derive.go",
		Old: "heads := max(m.KVHeads/int64(t), 1)", New: "heads := max(m.KVHeads/int64(t), 0)",
		Pkgs: model, Bug: "ranks beyond the KV heads given no head instead of a replica"},
	{Name: "model-head-dim-ignored", File: "pkg/modelgeom/config.go",
		Old: `v, ok, err := r.get("head_dim", 1, maxDim)`, New: `v, ok, err := r.get("head_dim_", 1, maxDim)`,
		Pkgs: model, Bug: "head_dim ignored: hidden_size / num_attention_heads always"},
	{Name: "model-mla-one-token", File: "pkg/modelgeom/derive.go",
		Old: "item, unit = T*m.LatentDim*e, 1", New: "item, unit = m.LatentDim*e, 1",
		Pkgs: model, Bug: "MLA latent items sized for one token whatever the page size"},
	{Name: "model-no-single-draft-layer", File: "pkg/modelgeom/derive.go",
		Old: "if draft > 0 {", New: "if draft > 1 {",
		Pkgs: model, Bug: "a model's single MTP draft layer left out"},
	{Name: "model-advise-costliest-first", File: "pkg/modelplan/advise.go",
		Old: "cmp.Compare(a.TransfersPerPage, b.TransfersPerPage),", New: "cmp.Compare(b.TransfersPerPage, a.TransfersPerPage),",
		Pkgs: model, Bug: "advise ranks the costliest layouts first"},
	{Name: "model-hybrid-unequal-tp", File: "pkg/modelplan/pair.go",
		Old: "if m.Family != modelgeom.FamilyHybrid || m.MambaLayers == 0 || P == D {", New: "if true {",
		Pkgs: model, Bug: "a hybrid's convolution state moved between ranks of unequal TP"},
	{Name: "planner-fix-wrong-replication", File: "pkg/transferplan/v1/fixes.go",
		Old: "return s.rows * max(s.distinct/t, 1) * s.unit, true", New: "return s.rows * (s.distinct/t + 1) * s.unit, true",
		Pkgs: planner, Bug: "a refusal's fix names TP sizes worked out with the wrong head split"},

	// pkg/kvwire
	{Name: "wire-fragment-key", File: "pkg/kvwire/v1/fragments.go",
		Old: "dst = append(dst, `,\"dst_byte_offset\":`...)", New: "dst = append(dst, `,\"dst_offset\":`...)",
		Pkgs: wire, Bug: "a fragment key misspelt on the wire"},
	{Name: "wire-big-endian-pointers", File: "pkg/kvwire/numbers.go",
		Old: "dst = binary.LittleEndian.AppendUint64(dst, v)", New: "dst = binary.BigEndian.AppendUint64(dst, v)",
		Pkgs: wire, Bug: "buffer pointers encoded big-endian"},
	{Name: "wire-l15-flag", File: "pkg/kvwire/v1/request.go",
		Old: "\t\tbuf = append(buf, '1')\n", New: "\t\tbuf = append(buf, '0')\n",
		Pkgs: wire, Bug: "the MLA L1.5 flag always sent as 0"},
	{Name: "wire-dummy-kv-frame", File: "pkg/kvwire/v1/request.go",
		Old: "\t\tends[4], ends[5] = len(buf), len(buf)\n", New: "\t\tbuf = kvwire.AppendDecimal(buf, 0)\n\t\tends[4], ends[5] = len(buf), len(buf)\n",
		Pkgs: wire, Bug: "a dummy request's kv_indices frame not empty (the prefill would take it for a real request)"},
	{Name: "wire-token-needs-five-frames", File: "pkg/kvwire/status.go",
		Old: "\tif len(frames) > 3 {\n", New: "\tif len(frames) > 4 {\n",
		Pkgs: wire, Bug: "the bootstrap token of a four-frame status ignored"},

	{Name: "wire-contract-leading-zero", File: "pkg/kvwire/numbers.go",
		Old: "if len(b) > 1 && b[0] == '0' {", New: "if false {",
		Pkgs: wire, Bug: "a contract-wire number with a leading zero taken, which the engine refuses"},
	{Name: "wire-contract-tp-frames-swapped", File: "pkg/kvwire/contract/registration.go",
		Old:  "return append(frames, c.Contract, buf[ends[4]:sizeEnd:sizeEnd], buf[sizeEnd:len(buf):len(buf)])",
		New:  "return append(frames, c.Contract, buf[sizeEnd:len(buf):len(buf)], buf[ends[4]:sizeEnd:sizeEnd])",
		Pkgs: wire, Bug: "decode_tp_size and decode_tp_rank sent in each other's frames"},
	{Name: "wire-manifest-last-page-allowed", File: "pkg/kvwire/contract/manifestcheck.go",
		Old: "if g.max >= rule.PageCount {", New: "if g.max > rule.PageCount {",
		Pkgs: wire, Bug: "a block id equal to page_count (one past the decode arena) taken"},
	{Name: "wire-manifest-no-sliding-window", File: "pkg/kvwire/contract/manifestlayout.go",
		Old: "if g.SlidingWindowTokens > 0 {", New: "if false {",
		Pkgs: wire, Bug: "sliding-window groups expected to carry the whole suffix"},
	{Name: "wire-bootstrap-wire-inverted", File: "pkg/kvwire/wire.go",
		Old: "if _, ok := keys[\"cache_layout\"]; ok {", New: "if _, ok := keys[\"cache_layout\"]; !ok {",
		Pkgs: wire, Bug: "a contract answer taken for a v1 one and the other way round"},

	// pkg/planstore
	{Name: "store-index-field-renamed", File: "pkg/planstore/format.go",
		Old: "`json:\"planHash\"`", New: "`json:\"planDigest\"`",
		Pkgs: publishing, Bug: "an index field renamed on both the writing and the reading side"},
	{Name: "store-hash-not-checked", File: "pkg/planstore/decode.go",
		Old: "if got := hasher.sum(); got != idx.PlanHash {", New: "if got := hasher.sum(); got != idx.PlanHash && false {",
		Pkgs: store, Bug: "a reassembled plan set not checked against the index's plan hash"},
	{Name: "store-rank-key-unpadded", File: "pkg/planstore/format.go",
		Old: `"rank-%04d.json.gz"`, New: `"rank-%d.json.gz"`,
		Pkgs: publishing, Bug: "rank keys without zero padding (a silent format change)"},
	{Name: "store-size-estimate-raw-bytes", File: "pkg/planstore/format.go",
		Old: "n += entrySize(k, base64Len(len(v)))", New: "n += entrySize(k, len(v))",
		Pkgs: store, Bug: "shard sizes estimated without base64, so shards can pass the API server's limit"},
	{Name: "store-unknown-fields-accepted", File: "pkg/planstore/decode.go",
		Old: "\tdec.DisallowUnknownFields()\n", New: "\n",
		Pkgs: store, Bug: "unknown keys in the index or a plan accepted"},
	{Name: "store-seal-not-checked", File: "pkg/planstore/seal.go",
		Old: "if got := hex.EncodeToString(sum[:]); got != s.IndexSHA256 {", New: "if got := hex.EncodeToString(sum[:]); got != s.IndexSHA256 && false {",
		Pkgs: []string{"./pkg/planstore/...", "./pkg/receiver/plansource/..."}, Bug: "an index the operator did not seal is loaded (a ConfigMap shadowing the plans)"},
	{Name: "store-signature-not-verified", File: "pkg/planstore/signature.go",
		Old: "if !ed25519.Verify(pub, sig.signedBytes(kind.domain), b) {", New: "if false && !ed25519.Verify(pub, sig.signedBytes(kind.domain), b) {",
		Pkgs: []string{"./pkg/planstore/...", "./pkg/receiver/plansource/..."}, Bug: "a signature a tenant edited is believed"},
	{Name: "agent-older-generation-accepted", File: "pkg/receiver/plansource/signed.go",
		Old: "if st.Generation < s.generation {", New: "if false && st.Generation < s.generation {",
		Pkgs: []string{"./pkg/receiver/plansource/..."}, Bug: "an older generation's signed index, replayed, is loaded"},

	// pkg/receiver
	{Name: "agent-dummy-status-counted", File: "pkg/receiver/routeview.go",
		Old: "v.expectIdx[t.PrefillTPRank] = int(roleDummy)", New: "v.expectIdx[t.PrefillTPRank] = 0",
		Pkgs: agent, Bug: "a status from an MLA dummy target counted as the real target's answer"},
	{Name: "agent-one-response-short", File: "pkg/receiver/roomstate.go",
		Old: "if s.count < s.required {", New: "if s.count < s.required-1 {",
		Pkgs: agent, Bug: "a room completes one response early"},
	{Name: "agent-duplicate-success-counted", File: "pkg/receiver/roomstate.go",
		Old: "case !s.responded.add(idx):", New: "case !s.responded.add(idx) && false:",
		Pkgs: agent, Bug: "a second Success from the same rank counted"},
	{Name: "agent-late-failed-after-success", File: "pkg/receiver/roomstate.go",
		Old: "\tcase s.status.Finished():\n\t\treturn ObservedFinished", New: "\tcase s.status == Failed:\n\t\treturn ObservedFinished",
		Pkgs: agent, Bug: "a late Failed turns a successful room into a failure"},
	{Name: "agent-idle-ranks-not-released", File: "pkg/receiver/routeview.go",
		Old: "for _, r := range plan.IdlePrefillTPRanks {", New: "for _, r := range plan.IdlePrefillTPRanks[:0] {",
		Pkgs: agent, Bug: "decode TP rank 0 does not release idle prefill ranks"},

	{Name: "agent-spec-candidates-always", File: "pkg/receiver/routeview.go",
		Old: "specOK: plan.SupportsRemoteSpecCandidates,", New: "specOK: true,",
		Pkgs: agent, Bug: "spec candidates handed to the engine for plans that do not support them"},
	{Name: "agent-last-token-wins", File: "pkg/receiver/roomstate.go",
		Old: "if token != -1 && !s.hasToken {", New: "if token != -1 {",
		Pkgs: agent, Bug: "a later response's bootstrap token replaces the first"},
	{Name: "agent-dp-group-ignored", File: "pkg/receiver/peers.go",
		Old: "return int(room % int64(dpSize))", New: "return 0",
		Pkgs: agent, Bug: "every room sent to prefill DP group 0"},
	{Name: "agent-heartbeat-misses-never-reset", File: "pkg/receiver/peers.go",
		Old: "\t\tpa.misses = 0\n", New: "\t\tpa.misses += 0\n",
		Pkgs: agent, Bug: "heartbeat misses not reset by an answer: scattered misses drop a live prefill"},
	{Name: "agent-sweeper-off", File: "pkg/receiver/sweeper.go",
		Old: "func (m *Manager) expireRooms() {\n", New: "func (m *Manager) expireRooms() {\n\tif m != nil {\n\t\treturn\n\t}\n",
		Pkgs: agent, Bug: "rooms nobody polls never time out"},
	{Name: "agent-stream-end-keeps-rooms-unfailed", File: "pkg/receiver/stream.go",
		Old: "if sh.fail(e, reason, fmt.Sprintf(", New: "if e == nil && sh.fail(e, reason, fmt.Sprintf(",
		Pkgs: agent, Bug: "a stream that ends forgets its rooms without failing them: the engine never learns"},
	{Name: "agent-stream-no-resync", File: "pkg/receiver/localapi/eventwriter.go",
		Old: "\t\tif err == nil && overflow {\n", New: "\t\tif err == nil && overflow && w == nil {\n",
		Pkgs: agent, Bug: "events dropped for a slow engine are never resent: its rooms stay as they were"},
	{Name: "agent-stream-ref-ignored", File: "pkg/receiver/rooms.go",
		Old: "if owner != nil && (entry.owner != owner || entry.ref != ref) {", New: "if owner != nil && entry.owner != owner {",
		Pkgs: agent, Bug: "a stream's request for an earlier room of the number reaches the new room"},
	{Name: "agent-install-not-atomic", File: "pkg/receiver/planinstall.go",
		Old: "\t\tm.engMu.Lock()\n\t\tdefer m.engMu.Unlock()\n", New: "\t\t_ = m\n",
		Pkgs: agent, Bug: "an engine registering during a plan install leaves a pod's ranks on two plan sets"},
	{Name: "agent-reregistration-keeps-peers", File: "pkg/receiver/registration.go",
		Old: "m.routing.Store(&routing{view: r.view, peers: newPeerTable(r.peers.views)})", New: "m.routing.Store(r)",
		Pkgs: agent, Bug: "a restarted engine's new session never reaches the prefill ranks"},

	// controllers
	{Name: "operator-summary-min-is-max", File: "controllers/status.go",
		Old: "MinTargetsPerDecodeRank: int32(s.MinTargets),", New: "MinTargetsPerDecodeRank: int32(s.MaxTargets),",
		Pkgs: operator, Bug: "the status summary's minimum targets per decode rank is the maximum"},
	{Name: "operator-reason-unmapped", File: "controllers/conditions.go",
		Old: "\ttransferplan.ReasonItemNotUnitAligned:         pdv1.ReasonItemNotUnitAligned,\n", New: "",
		Pkgs: operator, Bug: "a planner reason missing from the condition reason table"},
	{Name: "operator-ready-unpublished", File: "controllers/status.go",
		Old: "\tcase !pub.published:\n", New: "\tcase !pub.published && false:\n",
		Pkgs: operator, Bug: "Ready=True although the plans are not published"},
	{Name: "operator-no-role-label", File: "controllers/configmaps.go",
		Old: "pdv1.LabelRole: role, ", New: "pdv1.LabelRole: role[:1], ",
		Pkgs: operator, Bug: "plan ConfigMaps published with a wrong role label"},
	{Name: "operator-owner-not-controller", File: "controllers/configmaps.go",
		Old: "controllerutil.SetControllerReference(pair, cm, r.Scheme)", New: "controllerutil.SetOwnerReference(pair, cm, r.Scheme)",
		Pkgs: operator, Bug: "plan ConfigMaps owned but not controlled by their PDPair"},
	{Name: "operator-no-compatibility-event", File: "controllers/status.go",
		Old: "\tr.recordCompatibilityChange(before, pair)\n", New: "",
		Pkgs: operator, Bug: "no event when LayoutCompatible changes"},
	{Name: "operator-adopts-without-role", File: "controllers/publish.go",
		Old: "labels[pdv1.LabelPDPair] == pair.Name && labels[pdv1.LabelRole] == role", New: "labels[pdv1.LabelPDPair] == pair.Name && role != \"\"",
		Pkgs: operator, Bug: "a user's ConfigMap with the pair label under a plan name adopted and deleted"},
	{Name: "operator-foreign-unnamed", File: "controllers/foreign.go",
		Old: "if _, ok := planRole(pair.Name, m.Name); !ok || claimable(m, pair) {", New: "if _, ok := planRole(pair.Name, m.Name); !ok || claimable(m, pair) || true {",
		Pkgs: operator, Bug: "a ConfigMap of someone else's under a plan name goes unreported"},
	// a namespace user's ConfigMaps, and refused plan sets
	{Name: "operator-configmaps-cached-whole", File: "controllers/pdpair_controller.go",
		Old: "Owns(&corev1.ConfigMap{}, builder.OnlyMetadata, ", New: "Owns(&corev1.ConfigMap{}, ",
		Pkgs: []string{"./test/integration/manager/"}, Run: "^TestLabelledConfigMapsDataIsNotCached$",
		Bug: "the data of every labelled ConfigMap (any namespace user's) is cached"},
	{Name: "operator-cached-metadata-untrimmed", File: "controllers/cache.go",
		Old: "func trimConfigMapMeta(in any) (any, error) {\n", New: "func trimConfigMapMeta(in any) (any, error) {\n\tif true {\n\t\treturn in, nil\n\t}\n",
		Pkgs: operator, Run: "^TestCacheKeepsLittleOfALabelledConfigMap$",
		Bug: "a labelled ConfigMap's annotations, owner references and finalizers are cached whole"},
	{Name: "operator-verified-ignores-version", File: "controllers/configmapsverified.go",
		Old: "e.at.rv == rv && e.at.contentHash == contentHash", New: "e.at.contentHash == contentHash",
		Pkgs: operator, Run: "^TestPublishedConfigMapsAreRestored$",
		Bug: "a plan ConfigMap someone else edited is believed to hold the plans"},
	{Name: "operator-own-write-echo-passed", File: "controllers/configmapsverified.go",
		Old: "case e.inFlight:", New: "case e.inFlight && false:",
		Pkgs: operator, Run: "^(TestForeignConfigMapChange|TestReconcilesPerObject)$",
		Bug: "the event of the manager's own write, come before its answer, reconciles the pair again"},
	{Name: "operator-foreign-listed-every-reconcile", File: "controllers/foreign.go",
		Old: "ok && !force {", New: "ok && !force && false {",
		Pkgs: operator, Run: "^TestForeignLooksAreReusedAndPaged$",
		Bug: "every reconcile lists the pair's namespace"},
	{Name: "operator-foreign-list-unpaged", File: "controllers/foreign.go",
		Old: "client.Limit(listPage), ", New: "",
		Pkgs: operator, Run: "^TestForeignLooksAreReusedAndPaged$",
		Bug: "a namespace's ConfigMaps are listed in one response"},
	{Name: "agent-sets-refusal-swallowed", File: "pkg/receiver/plansource/apiserver.go",
		Old: "p.SetsRefused = setsErr", New: "_ = setsErr",
		Pkgs: []string{"./pkg/receiver/plansource/"}, Run: "^TestAPISourceLoadsEverySet$",
		Bug: "a refused plansets.json falls back to the current set without a word"},
	{Name: "agent-sets-refusal-not-followed", File: "pkg/receiver/plansource/follow.go",
		Old: "f.Sets(next.Plans)", New: "_ = next",
		Pkgs: agentCmd, Run: "^TestRefusedPlanSetsAreReported$",
		Bug: "a plansets.json refused later (the same current set) goes unreported"},
	{Name: "agent-earlier-sets-not-followed", File: "pkg/receiver/plansource/follow.go",
		Old: "if setsOf(next.Plans) == st.sets {", New: "if next.Plans.Hash == st.hash {",
		Pkgs: []string{"./pkg/receiver/plansource/"}, Run: "^TestFollowerInstallsEarlierSetsUnderTheSameCurrentSet$",
		Bug: "earlier plan sets that change under the same current set are never installed"},
	{Name: "operator-status-loop", File: "controllers/statuswatch.go",
		Old:  "return !p.written.isOurs(types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}, &pair.Status)",
		New:  "return !p.written.isOurs(types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}, &pair.Status) || true",
		Pkgs: operator, Bug: "the operator's own status writes reconcile the PDPair again"},

	// the running prefill, read live (SGLang's parallel info)
	{Name: "sglang-live-unknown-key", File: "pkg/engine/sglang/parallelinfo.go",
		Old: "if _, known := parallelInfoKeys[key]; !known {", New: "if _, known := parallelInfoKeys[key]; !known && false {",
		Pkgs: sglangEngine, Run: "ParallelInfo", Bug: "an answer with a key PrefillServerInfo has no field for is taken, which SGLang's decode refuses"},
	{Name: "sglang-live-dtype-not-compared", File: "pkg/engine/sglang/liveprefill.go",
		Old: `live.KVCacheDtype != "" && live.KVCacheDtype != want {`, New: `false && live.KVCacheDtype != want {`,
		Pkgs: sglangEngine, Run: "CompareLive", Bug: "a running prefill of another --kv-cache-dtype reads as matching"},
	{Name: "operator-live-differs-ready", File: "controllers/liveprefill.go",
		Old: "\tsetCondition(pair, pdv1.PDPairReady, false, pdv1.ReasonLivePrefillDiffers, msg)\n", New: "",
		Pkgs: operator, Run: "TestLivePrefillMatchesOrDiffers", Bug: "a pair whose running prefill differs from its spec stays Ready"},
	{Name: "operator-live-quotes-answer", File: "controllers/liveprefill.go",
		Old: "livecontract.Malformed(url, body, code, err.Error())", New: "livecontract.Malformed(url, body, code+err.Error(), err.Error())",
		Pkgs: operator, Run: "TestLivePrefillHostileServers", Bug: "the status quotes what a bootstrap server sent"},
	{Name: "operator-live-not-forgotten", File: "controllers/liveprefill.go",
		Old: "r.live.forgetRole(types.NamespacedName{Namespace: pair.Namespace, Name: pair.Name}, livePrefillRole)", New: "_ = types.NamespacedName{}",
		Pkgs: operator, Run: "TestLivePrefillOnlyWhereTheEngineTells", Bug: "a read goes on after the spec stops naming its bootstrap address"},
	{Name: "operator-engine-pairs-stalled", File: "controllers/kstatus.go",
		Old: "case pub.published, pub.retry != nil, out.noPlans:", New: "case pub.published, pub.retry != nil:",
		Pkgs: operator, Run: "TestKStatus$", Bug: "a compatible vLLM or SGLang pair is Stalled because it loads no plans"},

	// charts/pdtopo
	{Name: "chart-probe-delay", File: "charts/pdtopo/templates/deployment.yaml",
		Old: "          initialDelaySeconds: 15\n", New: "          initialDelaySeconds: 16\n",
		Pkgs: chart, Bug: "the chart's manager Deployment drifts from config/manager"},
	{Name: "chart-namespaced-wrong-rules", File: "charts/pdtopo/templates/rbac-manager.yaml",
		Old: "\"file\" \"files/generated/namespaced-role.yaml\" \"kind\" \"Role\"", New: "\"file\" \"files/generated/rbac-role.yaml\" \"kind\" \"Role\"",
		Pkgs: chart, Bug: "namespaced mode's Role holds the certificate Secret's rules instead of the controller's"},
	{Name: "chart-webhooks-everywhere", File: "charts/pdtopo/templates/webhook.yaml",
		Old: "{{- if $.Values.watchNamespaces }}", New: "{{- if false }}",
		Pkgs: chart, Bug: "namespaced mode sends pods of every namespace to a manager that cannot read their PDPair"},
	{Name: "chart-schema-open", File: "charts/pdtopo/values.schema.json",
		Old: "  \"additionalProperties\": false,\n  \"properties\": {\n    \"image\"", New: "  \"additionalProperties\": true,\n  \"properties\": {\n    \"image\"",
		Pkgs: chart, Bug: "a misspelt top-level value is silently ignored"},
	{Name: "chart-selector-without-instance", File: "charts/pdtopo/templates/_helpers.tpl",
		Old: "app.kubernetes.io/instance: {{ .Release.Name }}\napp.kubernetes.io/component: manager\n", New: "app.kubernetes.io/component: manager\n",
		Pkgs: chart, Bug: "two releases in one namespace select each other's manager pods"},
	{Name: "chart-name-ignores-override", File: "charts/pdtopo/templates/_helpers.tpl",
		Old: "{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix \"-\" -}}", New: "{{- .Chart.Name -}}",
		Pkgs: chart, Bug: "nameOverride renames the objects but not the name label their selectors use"},
	{Name: "admission-index-projected-whole", File: "webhooks/podinjector_sidecar.go",
		Old: "add(planstore.IndexConfigMapName(pair), indexItems)", New: "add(planstore.IndexConfigMapName(pair), indexItems[:0])",
		Pkgs: []string{"./webhooks/..."}, Bug: "a key added to the index ConfigMap shadows a rank file in decode pods"},
	{Name: "admission-no-signature", File: "webhooks/podinjector_sidecar.go",
		Old: "\tsidecar.Args = append(sidecar.Args, signedPlanArgs(pair, agent)...)\n", New: "",
		Pkgs: []string{"./webhooks/..."}, Bug: "injected agents load whatever is projected where the plans go"},
	{Name: "manager-webhook-configs-unselected", File: "cmd/manager/webhook.go",
		Old: "rotator.AddRotator(webhookConfigsByName(mgr, w),", New: "rotator.AddRotator(mgr,",
		Pkgs: []string{"./cmd/manager/..."}, Bug: "the certificate rotator cannot list the webhook configurations the RBAC names"},
	{Name: "admission-agent-pull-secrets-dropped", File: "webhooks/podinjector_sidecar.go",
		Old: "\taddPullSecrets(pod, agent.ImagePullSecrets)\n", New: "",
		Pkgs: []string{"./webhooks/..."}, Bug: "decode pods cannot pull the agent image from a private registry"},
	{Name: "chart-no-metrics-auth", File: "charts/pdtopo/templates/rbac-manager.yaml",
		Old: "- apiGroups: [authentication.k8s.io]\n  resources: [tokenreviews]\n  verbs: [create]\n- apiGroups: [authorization.k8s.io]", New: "- apiGroups: [authorization.k8s.io]",
		Pkgs: chartRun, Bug: "namespaced mode cannot authenticate metrics scrapes"},

	// the cache-contract wire: the agent's contract path, the contract
	// planner, the registration frames, the engine stream's fast decoders
	// and the Go client's stream line
	{Name: "contract-agent-dummy-gets-manifest", File: "pkg/receiver/wire/contract/wire.go",
		Old: "out = dummy[:]", New: "out = append(dummy[:2:2], full[2])",
		Pkgs: agentOnly, Run: "^TestContractIdleRanksGetEmptyManifests$",
		Bug: "an idle prefill rank met as a dummy sent the room's manifest instead of an empty one"},
	{Name: "contract-agent-manifest-unchecked", File: "pkg/receiver/wire/contract/wire.go",
		Old:  "if _, err := kvcontract.ValidateManifest(manifest, &e.EngineState().(*engineContract).manifest); err != nil {",
		New:  "if _, err := kvcontract.ValidateManifest(manifest, &e.EngineState().(*engineContract).manifest); err != nil && false {",
		Pkgs: agentOnly, Run: "^TestContractOutOfArenaManifestNamesTheNumbers$",
		Bug: "a block manifest sent without checking it against the decode contract (a block outside the arena among them)"},
	{Name: "contract-agent-prefill-sha-unchecked", File: "pkg/receiver/wire/contract/answer.go",
		Old: "if sha == rec.PrefillContractSHA256 {", New: "if true {",
		Pkgs: agentOnly, Run: "^TestContractPrefillNotThePlansNamesTheHashes$",
		Bug: "a live prefill contract that is not the plan's (its SHA-256) taken"},
	{Name: "contract-agent-idle-success-counted", File: "pkg/receiver/routeview.go",
		Old: "v.expectIdx[r], v.sendAt[r] = int(roleIdle), len(v.sends)", New: "v.expectIdx[r], v.sendAt[r] = 0, len(v.sends)",
		Pkgs: agentOnly, Run: "^TestContractSuccessFromAnUnplannedRankDoesNotComplete$",
		Bug: "Success from an idle prefill rank (met as a dummy) counted as the first source's: a room completes before its data came"},
	{Name: "contract-agent-change-ignored", File: "pkg/receiver/wire/contract/answer.go",
		Old: "if live.SHA256() == was.sha {", New: "if true {",
		Pkgs: agentOnly, Run: "^TestContractPrefillChangesWhileRoomsAreOpen$",
		Bug: "a prefill that changed its contract while rooms are open goes unnoticed by the heartbeat"},
	{Name: "contract-wire-registration-ip-session-swapped", File: "pkg/kvwire/contract/registration.go",
		Old:  "buf = append(buf, c.DecodeIP...)\n\tends[1] = len(buf)\n\tbuf = kvwire.AppendDecimal(buf, int64(c.DecodeStatusPort))\n\tends[2] = len(buf)\n\tbuf = append(buf, c.SessionID...)\n",
		New:  "buf = append(buf, c.SessionID...)\n\tends[1] = len(buf)\n\tbuf = kvwire.AppendDecimal(buf, int64(c.DecodeStatusPort))\n\tends[2] = len(buf)\n\tbuf = append(buf, c.DecodeIP...)\n",
		Pkgs: wireOnly, Run: "^TestContractVectorsRegistration$",
		Bug: "the 8-frame registration sends decode_ip and session_id in each other's frames"},
	{Name: "contract-planner-prefix-granularity-unchecked", File: "pkg/transferplan/contract/compat.go",
		Old: "if !pyjson.Equal(prefill.prefixGranularity, decode.prefixGranularity) {", New: "if false {",
		Pkgs: contractOnly, Run: "^TestContract",
		Bug: "contracts of unequal prefix_granularity planned together, which the engine refuses"},
	{Name: "contract-planner-idle-on-every-rank", File: "pkg/transferplan/contract/planner.go",
		Old: "\tif d == 0 {\n", New: "\tif d >= 0 {\n",
		Pkgs: contractOnly, Run: "^TestContract",
		Bug: "every decode rank, not only rank 0, meets the idle prefill ranks as dummies"},
	{Name: "contract-scanop-leading-zero", File: "pkg/receiver/localapi/opscan.go",
		Old: "case digits == 0, digits > 1 && s.b[start] == '0', digits > 19:", New: "case digits == 0, digits > 19:",
		Pkgs: localAPI, Run: "^(TestOtherLinesAreLeftToEncodingJSON|FuzzScanOpAgreesWithDecodeOp)$",
		Bug: "the stream's fast path takes an integer with a leading zero, which encoding/json refuses"},
	{Name: "contract-scanop-int64-overflow", File: "pkg/receiver/localapi/opscan.go",
		Old: "case neg && u > 1<<63, !neg && u > 1<<63-1:", New: "case neg && u > 1<<63:",
		Pkgs: localAPI, Run: "^(TestOtherLinesAreLeftToEncodingJSON|TestRoomEventsTakeTheFastPath)$",
		Bug: "the stream's fast paths take 2^63 as an int64: a ref, a page index or a token wraps to -2^63"},
	{Name: "contract-eventscan-token-default", File: "pkg/receiver/localapi/eventscan.go",
		Old: "ev.BootstrapToken = -1", New: "ev.BootstrapToken = 0",
		Pkgs: localAPI, Run: "^(TestRoomEventsTakeTheFastPath|FuzzScanRoomEventAgreesWithDecodeEvent)$",
		Bug: "a room event without bootstrapToken read as token 0 instead of -1 (none)"},
	{Name: "contract-client-manifest-not-compacted", File: "pkg/receiver/agentclient/contract.go",
		Old: "if err := json.Compact(buf, manifest); err != nil {", New: "if _, err := buf.Write(manifest); err != nil {",
		Pkgs: client, Run: "^TestContractRoomsThroughTheStream$",
		Bug: "the Go client writes a manifest into its stream line as given: a pretty-printed one's newlines end the line"},
	{Name: "multipart-stop-at-oversize", File: "pkg/zmqsock/multipart.go",
		Old: "\t\tif (!more) return 0;", New: "\t\tif (!more || rx->kept != rx->nframes) return 0;",
		Pkgs: zmqSock, Run: "^TestReceiverDropsOversizeMessagesWhole$",
		Bug: "an oversize message is left half read: its remaining frames open the next message"},
	{Name: "multipart-keep-past-max-frames", File: "pkg/zmqsock/multipart.go",
		Old: "rx->kept < rx->maxframes && ", New: "",
		Pkgs: zmqSock, Run: "^TestReceiverDropsOversizeMessagesWhole$",
		Bug: "frames past the receiver's frame limit written past its lengths array"},
	{Name: "multipart-send-no-sndmore", File: "pkg/zmqsock/multipart.go",
		Old: "int f = flags | (i < n - 1 ? ZMQ_SNDMORE : 0);", New: "int f = flags;",
		Pkgs: zmqSock, Run: "^(TestSenderSendsWhatPebbeReads|FuzzReceiverAndSenderAgreeWithPebbe)$",
		Bug: "a multipart message sent as separate one-frame messages"},
	{Name: "multipart-frames-share-capacity", File: "pkg/zmqsock/multipart.go",
		Old: "frames[i] = data[off:end:end]", New: "frames[i] = data[off:end]",
		Pkgs: zmqSock, Run: "^TestReceiverReadsWhatPebbeSent$",
		Bug: "appending to a received frame overwrites the next one"},
	{Name: "engine-advise-costliest-first", File: "pkg/engine/advise.go",
		Old: "if c := slices.Compare(ka, kb); c != 0 {", New: "if c := slices.Compare(kb, ka); c != 0 {",
		Pkgs: []string{"./cmd/pdtopo/app/advise/..."}, Run: "Engine", Bug: "advise --engine ranks the costliest layouts first"},
	{Name: "vllm-advise-descriptor-size-ignored", File: "pkg/engine/vllm/rules/rank.go",
		Old: "c.TransfersPerDecodeBlock, -c.BytesPerTransfer, c.Notifications}", New: "c.TransfersPerDecodeBlock, c.Notifications}",
		Pkgs: []string{"./cmd/pdtopo/app/advise/..."}, Run: "Engine", Bug: "vLLM advice no longer prefers the larger NIXL descriptor"},
	{Name: "minimal-drops-engine-keys", File: "cmd/pdtopo/app/pair/pair.go",
		Old: "modelgeom.Minimal(config, engine.HFConfigKeys...)", New: "modelgeom.Minimal(config)",
		Pkgs: []string{"./cmd/pdtopo/app/pair/..."}, Run: "Engine", Bug: "pair --engine drops the sliding-window layers the SGLang rules refuse by"},
	{Name: "topograph-rankmap-one-dp-group", File: "internal/topograph/graph.go",
		Old: "allGroups := g.RankMap && rec.Decode.DPSize > 1", New: "allGroups := false && rec.Decode.DPSize > 1",
		Pkgs: []string{"./internal/topograph/..."}, Bug: "an SGLang rank map with DP attention drawn with one DP group"},
	{Name: "routes-rankmap-dummies-read", File: "cmd/pdtopo/app/routes/routes.go",
		Old: `role = "notified only"`, New: `role = "reads"`,
		Pkgs: []string{"./cmd/pdtopo/app/routes/..."}, Bug: "routes of an engine pair calls notify-only targets reads"},

	// rollouts: a decode pod's own layout
	{Name: "rollout-any-decode-layout-loaded", File: "pkg/planstore/setsload.go",
		Old: "if idx.Layout.Decode != want {", New: "if false {",
		Pkgs: agentCmd, Run: "^TestOldDecodeLayoutAgentRestartsMidRollout$",
		Bug: "an agent loads plans made for another decode layout than its pod was admitted under"},
	{Name: "rollout-one-set-any-decode-layout", File: "pkg/planstore/decodelayout.go",
		Old: "if o.decode == nil || idx.Layout.Decode == *o.decode {", New: "if true {",
		Pkgs: []string{"./pkg/receiver/plansource/"}, Run: "^TestSignedDirLoadsEverySet$",
		Bug: "a signed index of one set made for another decode layout is loaded"},
	{Name: "rollout-admitted-tp-not-checked", File: "pkg/receiver/enginelayout.go",
		Old: "admitted == nil || admitted.TPSize == info.TPSize {", New: "admitted == nil || true {",
		Pkgs: agentCmd, Run: "^(TestOldDecodeLayoutAgentRestartsMidRollout|TestEngineTPDisagreeingWithAdmittedLayout)$",
		Bug: "an engine of another TP than its pod's admitted layout registers"},
	{Name: "rollout-kept-generation-set-dropped", File: "controllers/plansets.go",
		Old: "g.PlanHash != \"\" && g.PlanHash == s.PlanHash", New: "g.PlanHash == \"-\"",
		Pkgs: rolloutE2E, Run: "^TestRolloutEndToEnd$",
		Bug: "the set of a generation status.generations keeps is not published beside the current one"},
	{Name: "rollout-sets-ignore-decode-layout", File: "pkg/planstore/setsload.go",
		Old: "if o.decode != nil {", New: "if false {",
		Pkgs: rolloutE2E, Run: "^TestRolloutEndToEnd$",
		Bug: "an old-layout agent restarted mid-rollout loads the current decode layout's sets (RankOutOfRange)"},
	{Name: "rollout-generation-never-dropped", File: "controllers/generations.go",
		Old: "case now.Sub(g.LastUsed.Time) < GenerationGrace:", New: "case true:",
		Pkgs: rolloutE2E, Run: "^TestRolloutEndToEnd$",
		Bug: "a generation nothing uses stays published past its grace"},
	{Name: "vllm-versions-not-compared", File: "pkg/engine/vllm/rules/rules.go",
		Old: "if p.Prefill.Version == \"\" || p.Decode.Version == \"\" || p.Prefill.Version == p.Decode.Version {", New: "if true {",
		Pkgs: []string{"./pkg/engine/vllm/rules/"}, Run: "^TestJudgeMatchesVLLMVersionHashes$",
		Bug: "roles on different vLLM versions, which NixlConnector's handshake hash refuses, judged compatible"},
	{Name: "usage-decode-key-ignores-version", File: "controllers/generations_usage.go",
		Old: "return usageKey{layout: parallelismOf(f), version: f.EngineVersion}", New: "return usageKey{layout: parallelismOf(f)}",
		Pkgs: operator, Run: "^TestNextGenerations$",
		Bug: "generations of one layout on two engine versions count each other's pods"},
	{Name: "usage-keeps-generation-by-whole-layout", File: "controllers/generations.go",
		Old: "k != decodeKey(cur.Decode) && g.DecodePods+g.Agents > 0", New: "!equality.Semantic.DeepEqual(g.Decode, cur.Decode) && g.DecodePods+g.Agents > 0",
		Pkgs: operator, Run: "^TestNextGenerations$",
		Bug: "a generation differing only in what pods do not record is kept forever by the new pods"},
	{Name: "webhook-vllm-pods-not-annotated", File: "webhooks/podinjector_noagent.go",
		Old: "\t\tpod.Annotations[pdv1.AnnotationDecodeLayout] = DecodeLayoutOf(pair).String()\n", New: "\n",
		Pkgs: []string{"./webhooks/"}, Run: "^TestPodsOfEnginesWithoutTheAgent",
		Bug: "vLLM and SGLang decode pods are not counted for their generation"},

	// rollouts on the local control plane (make rollout-demo)
	{Name: "rollout-demo-agent-ignores-decode-layout", File: "cmd/receiver-agent/flags.go",
		Old: "o.decodeLayout = &p", New: "_ = p",
		Pkgs: localRollout, Run: "^TestRolloutScenario$",
		Bug: "the agent ignores --decode-layout: an old TP 4 pod loads the TP 2 plans (RankOutOfRange) once the decode TP is edited"},
	{Name: "rollout-demo-old-generation-dropped", File: "controllers/generations.go",
		Old:  "func retain(g *pdv1.PlanGeneration, cur LayoutPair, in generationsInput, now metav1.Time) bool {\n",
		New:  "func retain(g *pdv1.PlanGeneration, cur LayoutPair, in generationsInput, now metav1.Time) bool {\n\tif true {\n\t\treturn false\n\t}\n",
		Pkgs: localRollout, Run: "^TestRolloutScenario$",
		Bug: "an edit drops the old generation at once: rooms from a P8 prefill still serving fail"},
	{Name: "rollout-demo-current-set-only", File: "pkg/receiver/plansets.go",
		Old: "for _, v := range views {", New: "for _, v := range views[:1] {",
		Pkgs: localRollout, Run: "^TestRolloutScenario$",
		Bug: "the agent matches a room's prefill against the current plan set only"},

	{Name: "rollout-cross-pair-not-planned", File: "controllers/crossplans.go",
		Old: "if !own && !slices.ContainsFunc(out, lp.equal) {", New: "if false && !own {",
		Pkgs: rolloutE2E, Run: "^TestRolloutEndToEnd$",
		Bug: "a cross pair never current (old P8 prefill × new D2 decode) gets no plans: its rooms fail with LayoutMismatch"},
	{Name: "rollout-cross-sources-swapped", File: "controllers/crossplans.go",
		Old: "prefillSide, decodeSide := pre.Layout, dec.Layout", New: "prefillSide, decodeSide := dec.Layout, pre.Layout",
		Pkgs: operator, Run: "^TestCrossPairPlannedAndPublished$",
		Bug: "a kvBuffers cross pair is composed with its prefill side from the decode layout's set"},
	{Name: "rollout-cross-other-cache-composed", File: "pkg/transferplan/v1/compose.go",
		Old: "if err := sameCache(prefillSide, decodeSide); err != nil {", New: "if err := sameCache(prefillSide, decodeSide); false && err != nil {",
		Pkgs: operator, Run: "^TestRefusedCrossPairNotPublished$",
		Bug: "a cross pair of generations with different caches is composed and published"},
	{Name: "rollout-sets-order-ignores-use", File: "controllers/plansets.go",
		Old: "slices.SortStableFunc(out, func(a, b planstore.SplitSet) int { return rank(a) - rank(b) })", New: "_ = rank",
		Pkgs: operator, Run: "^TestSetsPastTheBudgetLeaveOutTheUnusedFirst$",
		Bug: "past the shard budget, the set of layouts whose instances run now is left out before one in its grace"},
}

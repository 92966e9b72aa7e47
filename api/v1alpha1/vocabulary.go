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

package v1alpha1

// This file is the API's vocabulary: the condition types, the reasons the
// operator sets itself, and the label and annotation keys. Controllers, the
// webhook, the agent and the tools import these; no other file spells them.

// PDPairConditionType is the type of a condition in PDPairStatus.Conditions.
type PDPairConditionType string

const (
	// PDPairLayoutCompatible: the prefill and decode layouts can exchange KV
	// cache. False carries the planner's reason (a transferplan.Reason).
	PDPairLayoutCompatible PDPairConditionType = "LayoutCompatible"
	// PDPairPlansPublished: route plans for this generation are in ConfigMaps.
	PDPairPlansPublished PDPairConditionType = "PlansPublished"
	// PDPairReady: the layout is compatible and its plans are published.
	PDPairReady PDPairConditionType = "Ready"
	// PDPairReconciling (kstatus): the operator is still working towards the
	// spec; present only while True.
	PDPairReconciling PDPairConditionType = "Reconciling"
	// PDPairStalled (kstatus): the operator cannot make progress without a
	// change to the spec (incompatible layout, plan over budget); present only
	// while True.
	PDPairStalled PDPairConditionType = "Stalled"
	// PDPairDecodeAgentsCurrent: every bound decode pod's agent is ready and
	// runs the current plan; False names the pods that lag and why.
	PDPairDecodeAgentsCurrent PDPairConditionType = "DecodeAgentsCurrent"
	// PDPairPlanNamesClear: no ConfigMap of someone else's stands under one
	// of the pair's plan names (the index and every shard name decode pods
	// project); False names them. Agents load only the index the operator
	// sealed, so such a ConfigMap is never loaded, but it is someone's
	// mistake or an attempt worth knowing of.
	PDPairPlanNamesClear PDPairConditionType = "PlanNamesClear"
	// PDPairRolloutCompatible: every cross-generation pair of the
	// generations served (old prefill × new decode, new prefill × old
	// decode) is compatible under the engine's rules; False names those
	// that are not, with the engine's reason (docs/rollouts.md).
	PDPairRolloutCompatible PDPairConditionType = "RolloutCompatible"
	// PDPairLivePrefillMatches: the running prefill, as its bootstrap
	// server tells it, is the prefill spec.prefill describes (for an engine
	// whose prefill tells its layout, sglang, and a pair naming
	// spec.prefill.bootstrapAddress); False names each value that differs
	// with both values, Unknown says why it was not read. Absent for other
	// pairs.
	PDPairLivePrefillMatches PDPairConditionType = "LivePrefillMatches"
)

// PDPairConditionReason is the reason of a condition the operator sets
// itself. LayoutCompatible=False uses the planner's reasons verbatim.
type PDPairConditionReason string

const (
	// ReasonCompatible: LayoutCompatible=True.
	ReasonCompatible PDPairConditionReason = "Compatible"
	// ReasonPlanningFailed: the planner failed without a typed reason; a bug,
	// reported rather than hidden.
	ReasonPlanningFailed PDPairConditionReason = "PlanningFailed"
	// ReasonModelConfigUnavailable: spec.model.configMapKeyRef names a
	// ConfigMap or key that cannot be read; the operator looks again.
	ReasonModelConfigUnavailable PDPairConditionReason = "ModelConfigUnavailable"

	// The reasons of a model the derivation refuses (pkg/modelgeom's
	// reasons, word for word).

	// ReasonInvalidModelConfig: the model's config.json cannot be used; the
	// message names the key.
	ReasonInvalidModelConfig PDPairConditionReason = "InvalidModelConfig"
	// ReasonUnsupportedKVCacheDtype: kvCacheDtype is not one the engine stores.
	ReasonUnsupportedKVCacheDtype PDPairConditionReason = "UnsupportedKVCacheDtype"
	// ReasonTPDoesNotSplitHeads: a role's TP does not split the model's
	// heads as the engine requires; that role's engine would not start.
	ReasonTPDoesNotSplitHeads PDPairConditionReason = "TPDoesNotSplitHeads"

	// The LayoutCompatible=False reasons: the planner's reasons
	// (transferplan.Reason), word for word; the controller maps one to the
	// other in a table a test keeps complete.

	// ReasonInvalidLayout: the layout is structurally broken.
	ReasonInvalidLayout PDPairConditionReason = "InvalidLayout"
	// ReasonUnitSizeMismatch: prefill and decode unit bytes differ.
	ReasonUnitSizeMismatch PDPairConditionReason = "UnitSizeMismatch"
	// ReasonItemNotUnitAligned: an item is not a whole number of units.
	ReasonItemNotUnitAligned PDPairConditionReason = "ItemNotUnitAligned"
	// ReasonUnsupportedHeterogeneousTP: the two sides shard a buffer in ways
	// the transfer protocol cannot bridge.
	ReasonUnsupportedHeterogeneousTP PDPairConditionReason = "UnsupportedHeterogeneousTP"
	// ReasonShardNotAligned: a buffer does not split evenly over the ranks.
	ReasonShardNotAligned PDPairConditionReason = "ShardNotAligned"
	// ReasonItemSmallerThanShard: an item cannot hold its rank's shard.
	ReasonItemSmallerThanShard PDPairConditionReason = "ItemSmallerThanShard"
	// ReasonMLAL15RequiresMLA: the MLA L1.5 cache on a non-MLA model.
	ReasonMLAL15RequiresMLA PDPairConditionReason = "MLAL15RequiresMLA"
	// ReasonMLAItemSizeMismatch: an MLA buffer's item differs between the sides.
	ReasonMLAItemSizeMismatch PDPairConditionReason = "MLAItemSizeMismatch"
	// ReasonWholeStateCopyUnsafe: a prefill rank would send a decode rank KV
	// but none of its state, and would then copy every state buffer whole.
	ReasonWholeStateCopyUnsafe PDPairConditionReason = "WholeStateCopyUnsafe"
	// ReasonItemNotTokenAligned: pages hold several tokens and a decode rank
	// takes a head range of every token row, but an item is not whole rows of
	// whole units.
	ReasonItemNotTokenAligned PDPairConditionReason = "ItemNotTokenAligned"
	// ReasonStridedPagesNeedProtocolV2 is retired: operators before token-row
	// planning refused multi-token pages whose heads a decode rank splits;
	// they are now planned as one fragment per token row. Kept so that such
	// conditions keep a documented meaning.
	ReasonStridedPagesNeedProtocolV2 PDPairConditionReason = "StridedPagesNeedProtocolV2"
	// ReasonRankOutOfRange: a plan was asked for a rank that does not exist.
	ReasonRankOutOfRange PDPairConditionReason = "RankOutOfRange"

	// Reasons of cache-contract pairs (docs/layout-verdicts.md).

	// ReasonContractInvalid: a contract does not decode as the engine decodes it.
	ReasonContractInvalid PDPairConditionReason = "ContractInvalid"
	// ReasonContractTooLarge: a contract is empty or past 256 KiB.
	ReasonContractTooLarge PDPairConditionReason = "ContractTooLarge"
	// ReasonContractUnsupportedValue: a contract decodes but holds values no
	// transfer can use.
	ReasonContractUnsupportedValue PDPairConditionReason = "ContractUnsupportedValue"
	// ReasonContractTPOutOfRange: a role runs more than 1024 TP ranks per DP group.
	ReasonContractTPOutOfRange PDPairConditionReason = "ContractTPOutOfRange"
	// ReasonContractMismatchPrefixGranularity: the prefix granularities differ.
	ReasonContractMismatchPrefixGranularity PDPairConditionReason = "ContractMismatchPrefixGranularity"
	// ReasonContractMismatchGroupOrder: the cache groups differ in ids or order.
	ReasonContractMismatchGroupOrder PDPairConditionReason = "ContractMismatchGroupOrder"
	// ReasonContractMismatchGroupSemantics: a cache group's semantics differ.
	ReasonContractMismatchGroupSemantics PDPairConditionReason = "ContractMismatchGroupSemantics"
	// ReasonContractMismatchFieldOrder: a group's fields differ.
	ReasonContractMismatchFieldOrder PDPairConditionReason = "ContractMismatchFieldOrder"
	// ReasonContractMismatchFieldSemantics: a field's dtype, partition or
	// global shape differs.
	ReasonContractMismatchFieldSemantics PDPairConditionReason = "ContractMismatchFieldSemantics"
	// ReasonContractMismatchRankGeometry: equal TP sizes, other rank-local fields.
	ReasonContractMismatchRankGeometry PDPairConditionReason = "ContractMismatchRankGeometry"
	// ReasonContractShardsNotDividingTP: a field's shards do not divide a TP size.
	ReasonContractShardsNotDividingTP PDPairConditionReason = "ContractShardsNotDividingTP"
	// ReasonContractNoSourceFragments: unequal TP sizes and no fields to move.
	ReasonContractNoSourceFragments PDPairConditionReason = "ContractNoSourceFragments"

	// Reasons of pairs on engines vllm and sglang: their rules' reasons
	// (pkg/engine/vllm/rules, pkg/engine/sglang/rules), word for word;
	// docs/engines/vllm.md and docs/engines/sglang.md say which rule each is.

	// ReasonInvalidPair: a size the engine does not start with.
	ReasonInvalidPair PDPairConditionReason = "InvalidPair"
	// ReasonUnsupportedConnector: vLLM's kv connector is not NixlConnector.
	ReasonUnsupportedConnector PDPairConditionReason = "UnsupportedConnector"
	// ReasonTPNotDivisible: vLLM, the larger TP is not a multiple of the smaller.
	ReasonTPNotDivisible PDPairConditionReason = "TPNotDivisible"
	// ReasonKVCacheDtypeMismatch: the roles' --kv-cache-dtype strings differ.
	ReasonKVCacheDtypeMismatch PDPairConditionReason = "KVCacheDtypeMismatch"
	// ReasonEngineVersionMismatch: vLLM, the roles' engineVersion differ,
	// and NixlConnector hashes its version into the handshake.
	ReasonEngineVersionMismatch PDPairConditionReason = "EngineVersionMismatch"
	// ReasonBlockSizeNotMultiple: vLLM, decode --block-size is not a
	// multiple of prefill's.
	ReasonBlockSizeNotMultiple PDPairConditionReason = "BlockSizeNotMultiple"
	// ReasonReplicatedPrefillKV: vLLM, prefill TP above both decode TP and
	// the KV heads.
	ReasonReplicatedPrefillKV PDPairConditionReason = "ReplicatedPrefillKV"
	// ReasonKVCacheLayoutMismatch: vLLM, the roles' KV cache layouts differ.
	ReasonKVCacheLayoutMismatch PDPairConditionReason = "KVCacheLayoutMismatch"
	// ReasonLayoutNotBlockContiguous: vLLM, heterogeneous TP on NHD.
	ReasonLayoutNotBlockContiguous PDPairConditionReason = "LayoutNotBlockContiguous"
	// ReasonBlockSizeNotEqual: vLLM, prefill TP above decode TP needs equal
	// block sizes.
	ReasonBlockSizeNotEqual PDPairConditionReason = "BlockSizeNotEqual"
	// ReasonBlockLengthMismatch: vLLM, a region's bytes per block do not match.
	ReasonBlockLengthMismatch PDPairConditionReason = "BlockLengthMismatch"
	// ReasonHeadSplitWithHeteroBlocks: vLLM, several attention sources per
	// decode rank with different block sizes.
	ReasonHeadSplitWithHeteroBlocks PDPairConditionReason = "HeadSplitWithHeteroBlocks"
	// ReasonNHDMultiSourceRead: vLLM, NHD read from several prefill ranks.
	ReasonNHDMultiSourceRead PDPairConditionReason = "NHDMultiSourceRead"
	// ReasonPageSizeMismatch: SGLang, --page-size differs.
	ReasonPageSizeMismatch PDPairConditionReason = "PageSizeMismatch"
	// ReasonPPSizeMismatch: SGLang, decode PP neither 1 nor prefill's.
	ReasonPPSizeMismatch PDPairConditionReason = "PPSizeMismatch"
	// ReasonTPRatioNotDivisible: SGLang, the larger attention TP is not a
	// multiple of the smaller.
	ReasonTPRatioNotDivisible PDPairConditionReason = "TPRatioNotDivisible"
	// ReasonHybridStateTPMismatch: SGLang, a sliding-window, DSA or Mamba
	// state pool of a non-MLA model at different attention TP.
	ReasonHybridStateTPMismatch PDPairConditionReason = "HybridStateTPMismatch"
	// ReasonContractUnavailable: a contract's ConfigMap or key does not
	// exist; the operator reads it again until it does.
	ReasonContractUnavailable PDPairConditionReason = "ContractUnavailable"
	// ReasonContractPending: LayoutCompatible=Unknown, a contract the spec
	// leaves to the live engines has not been read yet (the prefill's
	// bootstrap server does not answer with one, no decode agent reports
	// one); the message says what is missing and why. The operator reads
	// again until it has both.
	ReasonContractPending PDPairConditionReason = "ContractPending"
	// ReasonContractParallelismMismatch: the prefill's bootstrap server
	// reports another TP or DP size than spec.prefill.
	ReasonContractParallelismMismatch PDPairConditionReason = "ContractParallelismMismatch"
	// ReasonBootstrapAddressNotAllowed: LayoutCompatible=False, the
	// manager runs with --bootstrap-address-allowlist and
	// spec.prefill.bootstrapAddress is neither an allowed Service nor in
	// an allowed address range; nothing was sent to it.
	ReasonBootstrapAddressNotAllowed PDPairConditionReason = "BootstrapAddressNotAllowed"

	// ReasonPublished: PlansPublished=True.
	ReasonPublished PDPairConditionReason = "Published"
	// ReasonLayoutIncompatible: no plans because the layout is incompatible;
	// published plans were withdrawn.
	ReasonLayoutIncompatible PDPairConditionReason = "LayoutIncompatible"
	// ReasonPlanTooLarge: the pair's plans exceed the operator's plan budget
	// (fragments or encoded bytes); nothing was published.
	ReasonPlanTooLarge PDPairConditionReason = "PlanTooLarge"
	// ReasonPublishFailed: writing the ConfigMaps failed; retried with backoff.
	ReasonPublishFailed PDPairConditionReason = "PublishFailed"
	// ReasonConfigMapConflict: a ConfigMap with a plan ConfigMap's name exists
	// and is not controlled by this PDPair; the operator will not overwrite it.
	ReasonConfigMapConflict PDPairConditionReason = "ConfigMapConflict"
	// ReasonRankTooLarge: one decode rank's plan alone does not fit a ConfigMap.
	ReasonRankTooLarge PDPairConditionReason = "RankTooLarge"
	// ReasonIndexTooLarge: the plan index does not fit a ConfigMap.
	ReasonIndexTooLarge PDPairConditionReason = "IndexTooLarge"
	// ReasonPlansNotEncodable: any other reason the plans could not be encoded.
	ReasonPlansNotEncodable PDPairConditionReason = "PlansNotEncodable"

	// ReasonNoForeignConfigMaps: PlanNamesClear=True.
	ReasonNoForeignConfigMaps PDPairConditionReason = "NoForeignConfigMaps"
	// ReasonForeignConfigMaps: PlanNamesClear=False, ConfigMaps the operator
	// did not write (nor may adopt) stand under plan names.
	ReasonForeignConfigMaps PDPairConditionReason = "ForeignConfigMaps"

	// ReasonReady: Ready=True.
	ReasonReady PDPairConditionReason = "Ready"
	// ReasonPlansNotPublished: Ready=False because the layout is compatible but
	// its plans are not (yet) published.
	ReasonPlansNotPublished PDPairConditionReason = "PlansNotPublished"
	// ReasonEngineLoadsNoPlans: PlansPublished=False for a pair whose engine
	// (vllm, sglang) moves the KV cache itself and loads no plans; Ready is
	// then True on the verdict alone.
	ReasonEngineLoadsNoPlans PDPairConditionReason = "EngineLoadsNoPlans"

	// ReasonNewGeneration: Reconciling=True because the spec changed and the
	// operator has not yet observed it.
	ReasonNewGeneration PDPairConditionReason = "NewGeneration"

	// ReasonLivePrefillMatches: LivePrefillMatches=True.
	ReasonLivePrefillMatches PDPairConditionReason = "LivePrefillMatches"
	// ReasonLivePrefillDiffers: LivePrefillMatches=False, and Ready=False
	// for a pair whose spec is compatible: the running prefill's attention
	// TP, DP, PP, CP, page size or dtype is not the spec's, so the verdict
	// (made from the spec) does not describe it.
	ReasonLivePrefillDiffers PDPairConditionReason = "LivePrefillDiffers"
	// ReasonLivePrefillNotRead: LivePrefillMatches=Unknown, the bootstrap
	// server gave no answer the engine would use yet (unreachable, 503
	// while the prefill ranks register, not its answer); the verdict is
	// the spec's alone.
	ReasonLivePrefillNotRead PDPairConditionReason = "LivePrefillNotRead"

	// ReasonAgentsCurrent: DecodeAgentsCurrent=True.
	ReasonAgentsCurrent PDPairConditionReason = "AgentsCurrent"
	// ReasonNoDecodePods: DecodeAgentsCurrent=False, no pod is bound to the pair.
	ReasonNoDecodePods PDPairConditionReason = "NoDecodePods"
	// ReasonAgentsNotReady: some bound pods' agents are not ready.
	ReasonAgentsNotReady PDPairConditionReason = "AgentsNotReady"
	// ReasonAgentsOnStalePlan: some agents run a plan older than the current one.
	ReasonAgentsOnStalePlan PDPairConditionReason = "AgentsOnStalePlan"

	// ReasonOneGeneration: RolloutCompatible=True, only the current
	// generation is served (no rollout under way).
	ReasonOneGeneration PDPairConditionReason = "OneGeneration"
	// ReasonGenerationsCompatible: RolloutCompatible=True, every
	// cross-generation pair is compatible.
	ReasonGenerationsCompatible PDPairConditionReason = "GenerationsCompatible"
	// ReasonGenerationsIncompatible: RolloutCompatible=False, the engine
	// refuses some cross-generation pair (the message names each with the
	// engine's reason): rooms between those instances fail until one side's
	// rollout finishes; hold the rollout (docs/rollouts.md).
	ReasonGenerationsIncompatible PDPairConditionReason = "GenerationsIncompatible"
)

// Label and annotation keys.
const (
	// LabelPDPair names the PDPair an object belongs to: on plan ConfigMaps
	// (set by the operator) and on decode pods (set by the user to opt in).
	LabelPDPair = "pd.pdtopo.dev/pdpair"
	// LabelRole is an object's role in its pair: RoleDecode on a decode pod
	// (set by the user), RolePlanIndex or RolePlanShard on a plan ConfigMap.
	LabelRole = "pd.pdtopo.dev/role"

	// AnnotationPlanHash is the hash of the plan set a ConfigMap belongs to
	// (the PDPair's status.plan.hash).
	AnnotationPlanHash = "pd.pdtopo.dev/plan-hash"
	// AnnotationContentHash is the hash of a ConfigMap's data as the operator
	// wrote it.
	AnnotationContentHash = "pd.pdtopo.dev/content-hash"

	// AnnotationRanksPerPod is how many decode engine ranks one pod hosts
	// (default: the decode tensorParallelSize, the whole instance in one pod).
	AnnotationRanksPerPod = "pd.pdtopo.dev/ranks-per-pod"
	// AnnotationFirstRank is the first decode engine rank a pod hosts when the
	// pod is not part of a LeaderWorkerSet (default 0).
	AnnotationFirstRank = "pd.pdtopo.dev/first-rank"
	// AnnotationInjected records that the webhook injected the agent, and with
	// which first rank and rank count ("first=4,count=4").
	AnnotationInjected = "pd.pdtopo.dev/agent-injected"
	// AnnotationDecodeLayout records the decode layout a pod was admitted
	// under ("tp=4,dp=1", the pair's decode tensorParallelSize and
	// dataParallelSize then). The webhook writes it and gives the same
	// value to the agent (--decode-layout), which loads only plans made
	// for it: mid-rollout the pair's spec may already name another layout,
	// and the pod's engine still runs the one it started with.
	AnnotationDecodeLayout = "pd.pdtopo.dev/decode-layout"
	// AnnotationEngineVersion records the decode engineVersion a pod was
	// admitted under (the pair's spec.decode.engineVersion then), beside
	// AnnotationDecodeLayout: generations whose decode layouts differ only
	// in the engine version count their pods apart by it. A template may
	// pin it, as it pins the layout.
	AnnotationEngineVersion = "pd.pdtopo.dev/engine-version"
	// AnnotationCurveSecret names a Secret in the decode pod's namespace
	// holding agent.key and prefill.pub: the injected agent then speaks ZMQ
	// CURVE with the prefill ranks (docs/receiver-agent.md).
	AnnotationCurveSecret = "pd.pdtopo.dev/curve-secret"
	// AnnotationRequireCurve, "true" on a PDPair, has the webhook refuse
	// every decode pod of the pair without AnnotationCurveSecret, so taking
	// the annotation off a pod template cannot downgrade its agent to plain
	// ZMQ. Any value but "true" or "false" refuses the pods too.
	AnnotationRequireCurve = "pd.pdtopo.dev/require-curve"

	// LabelLWSWorkerIndex is LeaderWorkerSet's worker index label; a decode
	// pod under LWS hosts ranks from worker-index × ranks-per-pod.
	LabelLWSWorkerIndex = "leaderworkerset.sigs.k8s.io/worker-index"

	// LabelPDPairValidation on a Namespace set to PDPairValidationEnforce
	// makes the validating webhook refuse incompatible and over-budget
	// PDPairs there at apply time (everywhere with the manager's
	// --validate-pdpairs).
	LabelPDPairValidation = "pd.pdtopo.dev/pdpair-validation"
	// PDPairValidationEnforce is LabelPDPairValidation's enabling value.
	PDPairValidationEnforce = "enforce"

	// LabelManagedBy marks objects the operator manages.
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagerName is LabelManagedBy's value and the server-side apply field owner.
	ManagerName = "pdtopo"
)

// Values of LabelRole.
const (
	// RoleDecode marks a decode pod that opts into agent injection.
	RoleDecode = "decode"
	// RolePlanIndex marks the plan index ConfigMap of a pair.
	RolePlanIndex = "index"
	// RolePlanShard marks a plan shard ConfigMap of a pair.
	RolePlanShard = "shard"
	// RolePlanSeal marked the seal Secret of a pair, which operators before
	// signed indexes wrote (docs/decode-pods.md, "Upgrading").
	RolePlanSeal = "seal"
)

// The injected agent's shape, shared by the webhook that injects it, the
// operator that reads its probe endpoint, and the agent itself.
const (
	// AgentContainerName is the name of the injected native sidecar.
	AgentContainerName = "pdtopo-agent"
	// AgentProbePort is the agent's probe address port on the pod IP:
	// /healthz, /readyz, /metrics and /v1/agent (never the engine API).
	AgentProbePort = 9440
	// AgentProbePortName names AgentProbePort in the sidecar's ports, for
	// probes and PodMonitors.
	AgentProbePortName = "pdtopo-probe"
	// AgentInfoPath is the probe address path answering which plan the agent runs.
	AgentInfoPath = "/v1/agent"
	// AgentContractPath is the probe address path answering, with ?rank=R,
	// the cache transfer contract engine rank R registered with the agent.
	AgentContractPath = "/v1/agent/contract"
	// AgentSocketDir is where the shared emptyDir holding the agent's
	// per-rank unix sockets (rank-<R>.sock) is mounted in every container.
	AgentSocketDir = "/run/pdtopo"
	// AgentSocketDirEnv tells engine containers AgentSocketDir.
	AgentSocketDirEnv = "PDTOPO_AGENT_SOCKET_DIR"
	// AgentPlanDir is where the pair's plan ConfigMaps are projected, read-only.
	AgentPlanDir = "/etc/pdtopo/plans"
	// AgentSealDir is where pods admitted before signed indexes mount the
	// pair's seal Secret; the webhook no longer mounts it (docs/decode-pods.md).
	AgentSealDir = "/etc/pdtopo/seal"
	// AgentCurveDir is where the Secret of AnnotationCurveSecret is mounted,
	// read-only, and what the agent's --curve-keys names.
	AgentCurveDir = "/etc/pdtopo/curve"
	// AgentMaxRanksPerPod is the most engine ranks one agent serves (its
	// --rank-count limit); the webhook refuses pods asking for more.
	AgentMaxRanksPerPod = 64
	// AgentSocketsVolume, AgentPlansVolume, AgentSealVolume and
	// AgentCurveVolume are the injected volumes' names (AgentSealVolume
	// that of pods admitted before signed indexes, still reserved).
	AgentSocketsVolume = "pdtopo-sockets"
	AgentPlansVolume   = "pdtopo-plans"
	AgentSealVolume    = "pdtopo-plan-seal"
	AgentCurveVolume   = "pdtopo-curve"
)

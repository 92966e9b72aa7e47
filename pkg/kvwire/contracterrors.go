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

package kvwire

// The messages of tokenspeed's cache-contract wire, as named in an Error.
const (
	KindContractParallelInfo     MessageKind = "contract parallel info"
	KindContractRankRegistration MessageKind = "contract rank registration"
	KindContractRegistration     MessageKind = "contract registration"
	KindPreAllocation            MessageKind = "pre-allocation"
	KindContract                 MessageKind = "cache contract"
	KindManifest                 MessageKind = "block manifest"
	KindBootstrapAnswer          MessageKind = "bootstrap answer"
)

// Reasons of the cache-contract wire. The Manifest… reasons are the checks
// the engine's validate_cache_manifest makes, in its order; a refusal names
// the group and the numbers.
const (
	// ReasonPayloadSize: a payload is empty or over its budget (a contract
	// 1..MaxContractBytes, a manifest 1..MaxManifestBytes).
	ReasonPayloadSize Reason = "PayloadSize"
	// ReasonNotCanonical: an ASCII number the engine reads with
	// _bounded_ascii_uint has a sign, a leading zero or too many digits.
	ReasonNotCanonical Reason = "NotCanonical"
	// ReasonUnknownField: a JSON key no sender writes.
	ReasonUnknownField Reason = "UnknownField"
	// ReasonDuplicateKey: a JSON object names a key twice.
	ReasonDuplicateKey Reason = "DuplicateKey"
	// ReasonWireMismatch: a bootstrap answer of one wire where the other was
	// expected, or one that mixes both (v1's item lengths beside a contract).
	ReasonWireMismatch Reason = "WireMismatch"
	// ReasonContractUnusable: the decode contract parses, but the engine
	// could not select or bound a manifest's blocks with it (a group spec
	// without a plan group, a sliding window without its size).
	ReasonContractUnusable Reason = "ContractUnusable"

	// ReasonManifestPrefixNotBeforePrompt: prefix_len >= prompt_len.
	ReasonManifestPrefixNotBeforePrompt Reason = "ManifestPrefixNotBeforePrompt"
	// ReasonManifestGroupOrder: the manifest's groups are not the decode
	// contract's group specs, in order.
	ReasonManifestGroupOrder Reason = "ManifestGroupOrder"
	// ReasonManifestPrefixUnaligned: prefix_len is not a multiple of the
	// contract's prefix_granularity.
	ReasonManifestPrefixUnaligned Reason = "ManifestPrefixUnaligned"
	// ReasonManifestBlockCount: a group carries a number of blocks other
	// than its transfer policy selects for prefix_len and prompt_len.
	ReasonManifestBlockCount Reason = "ManifestBlockCount"
	// ReasonManifestBlockOutsideArena: a block id is 0 (the null page) or not
	// below the group's page_count in the decode arena.
	ReasonManifestBlockOutsideArena Reason = "ManifestBlockOutsideArena"
)

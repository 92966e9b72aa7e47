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

package rules

// Reason is a stable code for why SGLang refuses a pair (or pdtopo refuses
// one SGLang accepts); usable verbatim as a condition reason.
type Reason string

const (
	// ReasonInvalidPair: a size is not positive, DP does not divide TP, or
	// the backend is not mooncake or nixl.
	ReasonInvalidPair Reason = "InvalidPair"
	// ReasonPageSizeMismatch (rule 1): --page-size differs.
	ReasonPageSizeMismatch Reason = "PageSizeMismatch"
	// ReasonKVCacheDtypeMismatch (rule 2): the --kv-cache-dtype strings
	// differ.
	ReasonKVCacheDtypeMismatch Reason = "KVCacheDtypeMismatch"
	// ReasonPPSizeMismatch (rule 3): decode PP neither 1 nor prefill's.
	ReasonPPSizeMismatch Reason = "PPSizeMismatch"
	// ReasonTPRatioNotDivisible (rules 6, 7): the larger attention TP is
	// not a multiple of the smaller. SGLang fails some requests (decode
	// larger: a route 404) or accepts and reads the wrong heads (prefill
	// larger: StricterThanEngine).
	ReasonTPRatioNotDivisible Reason = "TPRatioNotDivisible"
	// ReasonHybridStateTPMismatch (rule 8): a non-MLA model with a sliding
	// window or DSA state pool at different attention TP; SGLang raises on
	// the prefill mid-transfer.
	ReasonHybridStateTPMismatch Reason = "HybridStateTPMismatch"
)

// Reasons is every Reason Judge can return, in declaration order; a test
// checks that it names every constant.
func Reasons() []Reason {
	return []Reason{
		ReasonInvalidPair,
		ReasonPageSizeMismatch,
		ReasonKVCacheDtypeMismatch,
		ReasonPPSizeMismatch,
		ReasonTPRatioNotDivisible,
		ReasonHybridStateTPMismatch,
	}
}

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

package engine

import pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"

// LivePrefillTeller is an Engine whose running prefill tells its layout to
// whoever asks its bootstrap server (SGLang's answers decode's handshake
// with its parallel info, page size and dtype). For a pair naming
// spec.prefill.bootstrapAddress the operator reads that answer in the
// background, through the same bounded client and fair slots as live
// contracts, and reports where the running prefill differs from the spec.
// The verdict stays the spec's: the answer is an observation of what runs.
//
// The engine only names the request and decodes the bytes; the operator
// does the HTTP (no redirect, a size cap, a timeout).
type LivePrefillTeller interface {
	// LivePrefillQuery is the path and query the prefill's bootstrap server
	// answers its layout at, and the most bytes such an answer can be.
	LivePrefillQuery() (pathQuery string, maxBytes int64)
	// DecodeLivePrefill decodes the answer as the engine's decode side
	// does, and refuses what it would not use. Its error is a
	// *LivePrefillError; its text may quote the answer, its Code does not.
	DecodeLivePrefill(answer []byte) (LivePrefill, error)
	// CompareLivePrefill says where the live prefill differs from
	// spec.prefill.
	CompareLivePrefill(spec pdv1.PDPairSpec, live LivePrefill) LiveComparison
}

// LiveComparison is a live prefill compared with spec.prefill.
type LiveComparison struct {
	// Differences are the values that differ, in the order the engine
	// checks them; none when the prefill is the spec's.
	Differences []LiveDifference
	// SpecFix are the spec fields to set, and to what, for the spec to
	// describe the running prefill; empty when no spec field can (a size
	// the API has no field for).
	SpecFix []FieldValue
}

// FieldValue is a spec field and a value for it.
type FieldValue struct{ Field, Value string }

// LivePrefill is a running prefill's layout as its bootstrap server told
// it, decoded and bounded: every number in range, the dtype a short word.
type LivePrefill struct {
	// AttentionTP, DP, PP and CP are its attention TP, data-parallel,
	// pipeline and context-parallel sizes.
	AttentionTP, DP, PP, CP int
	// PageSize is its page size, 0 when the server reports none.
	PageSize int
	// KVCacheDtype is its --kv-cache-dtype, "" when the server reports none.
	KVCacheDtype string
}

// LiveDifference is one way the live prefill differs from the spec.
type LiveDifference struct {
	// Field is the spec field that gives the value
	// ("prefill.tokensPerPage"); "" for a value the API has no field for.
	Field string
	// Name is the engine's name of the value ("attn_tp_size").
	Name string
	// Spec and Live are the two values, as decimal numbers or the dtype.
	Spec, Live string
}

// LivePrefillError is an answer the engine would not use.
type LivePrefillError struct {
	// Code says what was wrong in words of pdtopo's own (a key of the
	// engine's it names, a number decoded), fit for a status anyone may
	// read: never text of the answer.
	Code string
	// Detail may quote the answer (an unknown key, a bad value), for logs
	// and the CLI.
	Detail string
}

func (e *LivePrefillError) Error() string { return e.Detail }

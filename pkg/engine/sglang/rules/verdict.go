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

import "strings"

// Refusal says why a pair is refused: a stable reason, the field it
// concerns, a message naming the fields and numbers that ends with the Fix,
// and the fix: the nearest layouts that work under SGLang's rules and the flag
// to change.
type Refusal struct {
	Reason Reason
	// Field is the role's setting concerned, e.g. "decode.pageSize".
	Field string
	// Message is a sentence a person can act on; it ends with ". Fix: " and
	// the Fix.
	Message string
	// Fix is the change that would make the pair work, e.g. "set decode
	// --page-size to 16 (prefill's)".
	Fix string
	// StricterThanEngine: SGLang accepts the pair; pdtopo refuses because
	// the engine would move the wrong bytes.
	StricterThanEngine bool
}

func (r *Refusal) Error() string { return string(r.Reason) + ": " + r.Message }

// withFix ends the message with the fix.
func (r *Refusal) withFix(fix string) *Refusal {
	if fix == "" {
		return r
	}
	r.Fix = fix
	r.Message = strings.TrimSuffix(r.Message, ".") + ". Fix: " + fix
	return r
}

// Target is one prefill rank a decode rank sends its request's transfer
// info to (one GET /route each).
type Target struct {
	// PrefillTPRank is the attention-TP rank inside the prefill DP group.
	PrefillTPRank int
	// PrefillPPRank is the prefill pipeline stage.
	PrefillPPRank int
	// IsDummy: MLA, the decode rank only notifies this rank; it reads none
	// of its bytes.
	IsDummy bool
}

// DecodeRank is what one decode rank (one TP rank of one PP stage) reads.
type DecodeRank struct {
	// DecodeTPRank is the engine's global TP rank (DP attention included).
	DecodeTPRank int
	// DecodePPRank is the decode pipeline stage.
	DecodePPRank int
	// DecodeAttnTPRank is DecodeTPRank % the decode attention TP.
	DecodeAttnTPRank int
	// Targets in the order SGLang fetches them.
	Targets []Target
	// RequiredDstInfoNum is how many decode ranks each target prefill rank
	// writes to; RequiredPrefillResponseNum how many prefill answers this
	// rank waits for (SGLang's _resolve_rank_mapping).
	RequiredDstInfoNum, RequiredPrefillResponseNum int
}

// Verdict is Judge's answer.
type Verdict struct {
	// Refusal is nil when SGLang serves the pair (and pdtopo agrees).
	Refusal *Refusal
	// DecodeRanks: compatible pairs, PP stage by stage, TP rank by TP rank.
	DecodeRanks []DecodeRank
}

// Compatible reports whether the pair is accepted.
func (v Verdict) Compatible() bool { return v.Refusal == nil }

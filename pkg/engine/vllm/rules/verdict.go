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
// and the fix: the nearest layouts that work under vLLM's rules and the flag
// to change.
type Refusal struct {
	Reason Reason
	// Field is the role's setting concerned, e.g. "decode.blockSize".
	Field string
	// Message is a sentence a person can act on; it ends with ". Fix: " and
	// the Fix.
	Message string
	// Fix is the change that would make the pair work, e.g. "set decode
	// --block-size to 16 or 32 (a multiple of prefill's 16)".
	Fix string
	// StricterThanEngine: vLLM accepts the pair; pdtopo refuses because
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

// Target is one prefill rank a decode rank handshakes with.
type Target struct {
	PrefillTPRank int
	// IsDummy: the decode rank only notifies this prefill rank (MLA reads
	// one replica; a rank repeating a KV head is not read) and reads none
	// of its bytes.
	IsDummy bool
}

// DecodeRank is what one decode TP rank reads.
type DecodeRank struct {
	DecodeTPRank int
	// Targets are the prefill ranks it handshakes with, in rank order
	// (TransferTopology.handshake_target_ranks); the non-dummy ones are
	// those it reads (compute_tp_mapping's all_source_ranks).
	Targets []Target
	// AttentionFrom are the prefill ranks its attention KV comes from,
	// after the KV-head de-duplication.
	AttentionFrom []int
	// StateFrom are the prefill ranks its Mamba state comes from (hybrid
	// Mamba only).
	StateFrom []int
}

// Verdict is Judge's answer.
type Verdict struct {
	// Refusal is nil when the engine accepts the pair (and pdtopo agrees).
	Refusal *Refusal
	// DecodeRanks: compatible pairs, one per decode TP rank in rank order.
	DecodeRanks []DecodeRank
	// LocalConsumers is how many decode ranks read each prefill rank
	// (TransferTopology.dcp_consumer_count); the prefill frees a request's
	// blocks after that many notifications.
	LocalConsumers int
	// Conditions are what the verdict assumes and pdtopo cannot see from
	// the spec (the same vLLM build, --model string, attention backend).
	Conditions []string
}

// Compatible reports whether the pair is accepted.
func (v Verdict) Compatible() bool { return v.Refusal == nil }

// conditions of every vLLM verdict: the hash factors the spec does not hold.
var conditions = []string{
	"both roles run the same vLLM build (the compatibility hash covers vllm.__version__ and the NIXL connector version; compared only where both roles give engineVersion)",
	"both roles pass the same --model string, model dtype and attention backend, and the same speculative config",
	"the kernel block size equals --block-size, and DCP/PCP/PP are 1",
}

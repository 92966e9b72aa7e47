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

package modelgeom

import "fmt"

// The engine refuses to start a role whose attention TP (ranks per DP
// group) does not split the model's heads: query heads must divide evenly,
// and KV heads must either divide evenly or be replicated whole (TP a
// multiple of the KV heads). Hybrid models also split their
// linear-attention value heads and convolution channels evenly.

// checkSplit refuses a TP the engine would refuse, with the TPs that work.
func (m *Model) checkSplit(role string, t int) error {
	key, problem := m.splitProblem(int64(t))
	if key == "" {
		return nil
	}
	return &Error{Reason: ReasonTPDoesNotSplitHeads, Key: key, Field: role + ".tensorParallelSize",
		Problem: fmt.Sprintf("%s TP %d per DP group %s, so the engine refuses to start", role, t, problem),
		Fix:     fmt.Sprintf("%s TP %s per DP group would work with %s", role, orList(m.ValidTPs()), m.headsPhrase())}
}

// splitProblem names the first key t does not split, and how.
func (m *Model) splitProblem(t int64) (key, problem string) {
	if m.AttentionHeads%t != 0 {
		return "num_attention_heads", fmt.Sprintf("does not divide the %d attention heads", m.AttentionHeads)
	}
	if m.Family == FamilyMLA {
		return "", ""
	}
	if m.KVHeads >= t && m.KVHeads%t != 0 {
		return "num_key_value_heads", fmt.Sprintf("does not divide the %d KV heads", m.KVHeads)
	}
	if m.KVHeads < t && t%m.KVHeads != 0 {
		return "num_key_value_heads", fmt.Sprintf("is above the %d KV heads but not a multiple of them (ranks beyond the KV heads hold replicas)", m.KVHeads)
	}
	if m.Family == FamilyHybrid && m.MambaLayers > 0 {
		if m.SSMHeads%t != 0 {
			return "linear_num_value_heads", fmt.Sprintf("does not divide the %d linear-attention value heads", m.SSMHeads)
		}
		if m.ConvChannels%t != 0 {
			return "linear_key_head_dim", fmt.Sprintf("does not divide the %d convolution channels "+
				"(linear_key_head_dim × linear_num_key_heads × 2 + linear_value_head_dim × linear_num_value_heads)", m.ConvChannels)
		}
	}
	return "", ""
}

// ValidTPs are the attention TP sizes (ranks per DP group) the engine can
// run the model with, ascending: the divisors of num_attention_heads that
// also split the KV heads (and a hybrid model's linear-attention heads).
func (m *Model) ValidTPs() []int {
	var out []int
	for t := int64(1); t <= m.AttentionHeads; t++ {
		if key, _ := m.splitProblem(t); key == "" {
			out = append(out, int(t))
		}
	}
	return out
}

// headsPhrase names the heads ValidTPs depend on.
func (m *Model) headsPhrase() string {
	if m.Family == FamilyMLA {
		return fmt.Sprintf("these %d attention heads", m.AttentionHeads)
	}
	s := fmt.Sprintf("these %d KV heads and %d attention heads", m.KVHeads, m.AttentionHeads)
	if m.Family == FamilyHybrid && m.MambaLayers > 0 {
		s += fmt.Sprintf(" (and %d linear-attention value heads)", m.SSMHeads)
	}
	return s
}

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

import (
	"fmt"
)

// ReasonInvalidLayout: the parallel layout or page size itself is broken
// (TP or DP below 1, DP not dividing TP, tokensPerPage out of range); the
// same word as the planner's reason, which the CRD's rules make rare.
const ReasonInvalidLayout Reason = "InvalidLayout"

// MaxTokensPerPage bounds tokensPerPage (as the PDPair's schema does).
const MaxTokensPerPage = 65536

// maxItemBytes bounds one buffer's page on one rank (the planner's limit).
const maxItemBytes = 1 << 40

// Role is one role's parallel layout and, when it differs from the pair's,
// its KV cache dtype.
type Role struct {
	// TP is the role's whole attention world (--tp-size), DP its
	// data-parallel attention groups; each group has TP/DP ranks.
	TP, DP int
	// KVCacheDtype overrides Options.KVCacheDtype for this role when set.
	KVCacheDtype string
}

// Options are everything besides the config that sizes the buffers.
type Options struct {
	// KVCacheDtype is the KV cache dtype of both roles (unless a role
	// overrides it): a name of KVCacheDtypeNames.
	KVCacheDtype string
	// TokensPerPage is the engine's page size in tokens (--block-size).
	TokensPerPage int
	Prefill       Role
	Decode        Role
	// DraftLayers, when set, replaces the config's MTP draft layer count
	// (0: the engines run without a draft model).
	DraftLayers *int
}

// Buffer kinds of the engine's KV pointer order.
const (
	TargetK = "TargetK"
	TargetV = "TargetV"
	DraftK  = "DraftK"
	DraftV  = "DraftV"
)

// Group is a run of buffers with the same geometry on both roles: the
// fields of a PDPair buffer group.
type Group struct {
	// Kind is TargetK, TargetV, DraftK or DraftV for KV groups, "" for state.
	Kind string
	// Holds says what the buffers hold, for people ("K of 80 layers, 1 of
	// 8 KV heads per prefill rank…").
	Holds            string
	Count            int
	PrefillItemBytes int64
	DecodeItemBytes  int64
	PrefillUnitBytes int64
	DecodeUnitBytes  int64
}

// Pair is the derived geometry of a prefill/decode pair.
type Pair struct {
	Model *Model
	// Attention is "MHA" (MHA, GQA, MQA; also the hybrid's attention
	// layers) or "MLA".
	Attention    string
	KVBuffers    []Group
	StateBuffers []Group
}

// Derive parses a config.json and derives the pair's buffers.
func Derive(config []byte, o Options) (*Pair, error) {
	m, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	return m.Derive(o)
}

// roleBuffers is one role's registration: per group, its item and unit.
type roleGroup struct {
	kind       string
	holds      string
	count      int
	item, unit int64
}

// Derive sizes every buffer of both roles and pairs them group by group.
func (m *Model) Derive(o Options) (*Pair, error) {
	if o.TokensPerPage < 1 || o.TokensPerPage > MaxTokensPerPage {
		return nil, &Error{Reason: ReasonInvalidLayout, Key: "tokensPerPage",
			Problem: fmt.Sprintf("%d is out of range", o.TokensPerPage), Fix: fmt.Sprintf("set the engines' page size in tokens, 1 to %d", MaxTokensPerPage)}
	}
	draft := m.DraftLayers
	if o.DraftLayers != nil {
		if *o.DraftLayers < 0 || *o.DraftLayers > MaxLayers {
			return nil, &Error{Reason: ReasonInvalidLayout, Key: "draftLayers",
				Problem: fmt.Sprintf("%d is out of range", *o.DraftLayers), Fix: fmt.Sprintf("give 0 to %d draft layers", MaxLayers)}
		}
		draft = int64(*o.DraftLayers)
	}
	var roles [2]struct{ kv, state []roleGroup }
	for i, r := range []struct {
		name string
		role Role
	}{{"prefill", o.Prefill}, {"decode", o.Decode}} {
		dtypeName := o.KVCacheDtype
		if r.role.KVCacheDtype != "" {
			dtypeName = r.role.KVCacheDtype
		}
		dtype, err := ParseKVCacheDtype(dtypeName)
		if err != nil {
			if r.role.KVCacheDtype != "" {
				err.(*Error).Key = r.name + "." + dtypeKeyTag
			}
			return nil, err
		}
		t, err := tpPerDP(r.name, r.role)
		if err != nil {
			return nil, err
		}
		if err := m.checkSplit(r.name, t); err != nil {
			return nil, err
		}
		roles[i].kv, roles[i].state, err = m.registered(r.name, t, dtype, int64(o.TokensPerPage), draft)
		if err != nil {
			return nil, err
		}
	}
	p := &Pair{Model: m, Attention: "MHA"}
	if m.Family == FamilyMLA {
		p.Attention = "MLA"
	}
	p.KVBuffers = zip(roles[0].kv, roles[1].kv)
	p.StateBuffers = zip(roles[0].state, roles[1].state)
	return p, nil
}

func zip(pre, dec []roleGroup) []Group {
	out := make([]Group, len(pre))
	for i := range pre {
		out[i] = Group{Kind: pre[i].kind, Holds: pre[i].holds + "; " + dec[i].holds, Count: pre[i].count,
			PrefillItemBytes: pre[i].item, DecodeItemBytes: dec[i].item,
			PrefillUnitBytes: pre[i].unit, DecodeUnitBytes: dec[i].unit}
	}
	return out
}

func tpPerDP(name string, r Role) (int, error) {
	switch {
	case r.TP < 1:
		return 0, &Error{Reason: ReasonInvalidLayout, Key: name + ".tensorParallelSize", Problem: fmt.Sprintf("%d ranks", r.TP), Fix: "give at least 1"}
	case r.DP < 1 || r.TP%r.DP != 0:
		return 0, &Error{Reason: ReasonInvalidLayout, Key: name + ".dataParallelSize",
			Problem: fmt.Sprintf("%d does not divide tensorParallelSize %d", r.DP, r.TP), Fix: "give a divisor of tensorParallelSize " + orList(divisors(r.TP))}
	}
	return r.TP / r.DP, nil
}

func divisors(n int) []int {
	var out []int
	for d := 1; d <= n && len(out) < 64; d++ {
		if n%d == 0 {
			out = append(out, d)
		}
	}
	return out
}

// registered is what one rank of a role registers: its KV groups in
// pointer order and its state groups, for t TP ranks per DP group.
func (m *Model) registered(role string, t int, dtype KVCacheDtype, T, draft int64) (kv, state []roleGroup, err error) {
	e := dtype.Bytes()
	var item, unit int64
	var per string
	switch m.Family {
	case FamilyMLA:
		item, unit = T*m.LatentDim*e, 1
		per = fmt.Sprintf("%s: %d latent values × %d B × %d token(s), whole on every rank", role, m.LatentDim, e, T)
	default:
		heads := max(m.KVHeads/int64(t), 1)
		unit = m.HeadDim * e
		item = T * heads * unit
		per = fmt.Sprintf("%s: %d of %d KV heads × %d × %d B × %d token(s)", role, heads, m.KVHeads, m.HeadDim, e, T)
	}
	if item > maxItemBytes {
		return nil, nil, configErrorf("head_dim", "check the config", "a %s page of one layer would be %d bytes; at most %d are supported", role, item, int64(maxItemBytes))
	}
	kinds := [][2]string{{TargetK, "K"}, {TargetV, "V"}}
	draftKinds := [][2]string{{DraftK, "draft K"}, {DraftV, "draft V"}}
	if m.Family == FamilyMLA {
		kinds, draftKinds = [][2]string{{TargetK, "latent"}}, [][2]string{{DraftK, "draft latent"}}
	}
	for _, k := range kinds {
		kv = append(kv, roleGroup{kind: k[0], holds: fmt.Sprintf("%s of %d layers; %s", k[1], m.Layers, per), count: int(m.Layers), item: item, unit: unit})
	}
	if draft > 0 {
		for _, k := range draftKinds {
			kv = append(kv, roleGroup{kind: k[0], holds: fmt.Sprintf("%s of %d MTP layers; %s", k[1], draft, per), count: int(draft), item: item, unit: unit})
		}
	}
	if m.Family == FamilyHybrid && m.MambaLayers > 0 {
		tt := int64(t)
		// Convolution states are bfloat16, temporal states float32 (the
		// engine's defaults); state is per request slot, not per token.
		convUnit, ssmUnit := m.ConvTaps*2, m.SSMHeadValues*4
		state = []roleGroup{
			{holds: fmt.Sprintf("convolution state of %d linear-attention layers; %s: %d of %d channels × %d taps × 2 B", m.MambaLayers, role, m.ConvChannels/tt, m.ConvChannels, m.ConvTaps),
				count: int(m.MambaLayers), item: m.ConvChannels / tt * convUnit, unit: convUnit},
			{holds: fmt.Sprintf("temporal state of %d linear-attention layers; %s: %d of %d heads × %d values × 4 B", m.MambaLayers, role, m.SSMHeads/tt, m.SSMHeads, m.SSMHeadValues),
				count: int(m.MambaLayers), item: m.SSMHeads / tt * ssmUnit, unit: ssmUnit},
		}
		for _, g := range state {
			if g.item > maxItemBytes {
				return nil, nil, configErrorf("linear_value_head_dim", "check the config", "a %s state item would be %d bytes; at most %d are supported", role, g.item, int64(maxItemBytes))
			}
		}
	}
	return kv, state, nil
}

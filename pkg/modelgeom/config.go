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
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MaxConfigBytes bounds a config.json. Real configs are a few kilobytes
// (tens with a long quantization section); a larger one is refused before
// it is parsed.
const MaxConfigBytes = 1 << 20

// Bounds on the values the derivation multiplies, far above any real model,
// so that no product overflows and every buffer fits the planner's limits.
const (
	maxHeads  = 1 << 16 // num_attention_heads, num_key_value_heads, linear heads
	maxDim    = 1 << 16 // head_dim, kv_lora_rank, qk_rope_head_dim, linear dims
	maxHidden = 1 << 24 // hidden_size
	// MaxLayers bounds the layers of each kind (a PDPair buffer group holds
	// at most 4096 buffers).
	MaxLayers = 4096
)

// Family is how the engine caches a model's attention.
type Family string

const (
	// FamilyDense: MHA, GQA or MQA; K and V per layer, heads sharded.
	FamilyDense Family = "dense"
	// FamilyMLA: multi-head latent attention; one latent buffer per layer,
	// whole on every rank.
	FamilyMLA Family = "mla"
	// FamilyHybrid: full attention layers with a KV cache and gated
	// delta-net (linear attention) layers with recurrent state.
	FamilyHybrid Family = "hybrid"
)

// Architectures the engine caches with pools the derivation does not model.
var unmodelled = map[string]string{
	"GlmMoeDsaForCausalLM":       "the DSA pool (latent cache plus indexer buffers)",
	"GlmMoeDsaForCausalLMNextN":  "the DSA pool (latent cache plus indexer buffers)",
	"DeepseekV4ForCausalLM":      "the DeepSeek V4 pool (compressed and indexer caches)",
	"DeepseekV4ForCausalLMNextN": "the DeepSeek V4 pool (compressed and indexer caches)",
}

// Architectures the engine caches as MLA whatever their keys say, and those
// whose attention layer count is twice num_hidden_layers.
var (
	mlaArchitectures = map[string]bool{
		"DeepseekV3ForCausalLM": true, "DeepseekV3ForCausalLMNextN": true, "Eagle3DeepseekV2ForCausalLM": true,
		"LongcatFlashForCausalLM": true, "KimiK25ForConditionalGeneration": true, "MiniCPM3ForCausalLM": true,
	}
	doubleAttentionLayers = map[string]bool{"LongcatFlashForCausalLM": true}
	hybridArchitectures   = map[string]bool{
		"Qwen3_5ForConditionalGeneration": true, "Qwen3_5ForConditionalGenerationNextN": true,
		"Qwen3_5MoeForConditionalGeneration": true, "Qwen3_5MoeForConditionalGenerationNextN": true,
	}
)

// Model is what the derivation reads from a config.json: everything that
// sizes a buffer, whatever the parallel layout.
type Model struct {
	// Architecture is the first entry of architectures ("" when absent);
	// ModelType is model_type.
	Architecture string
	ModelType    string
	Family       Family
	// AttentionHeads, KVHeads and HeadDim are num_attention_heads,
	// num_key_value_heads and head_dim after Hugging Face's defaults.
	AttentionHeads, KVHeads, HeadDim int64
	// Layers are the target model's layers with a KV (or latent) buffer;
	// DraftLayers those of the MTP draft model the engine runs beside it.
	Layers, DraftLayers int64
	// LatentDim is kv_lora_rank + qk_rope_head_dim (MLA).
	LatentDim int64
	// MambaLayers are the hybrid model's linear-attention layers; ConvChannels
	// and ConvTaps size their convolution state, SSMHeads and SSMHeadValues
	// their temporal state (linear_num_value_heads of key × value dims).
	MambaLayers, ConvChannels, ConvTaps, SSMHeads, SSMHeadValues int64
	// Notes say which defaults were applied, for people reading a derived pair.
	Notes []string
}

// ParseConfig reads a model's config.json. It refuses input larger than
// MaxConfigBytes before parsing it, anything that is not one JSON object, and
// every key the derivation needs that is missing or not a positive integer,
// naming the key.
func ParseConfig(data []byte) (*Model, error) { return parseConfig(data, true) }

// ParseShape reads a config.json as ParseConfig does, but also for the
// architectures whose pools the derivation does not model (GLM-5's DSA,
// DeepSeek V4): for rules that judge a pair from the model's attention
// shape and derive no buffers (pkg/engine's vLLM and SGLang rules).
func ParseShape(data []byte) (*Model, error) { return parseConfig(data, false) }

func parseConfig(data []byte, refuseUnmodelled bool) (*Model, error) {
	if len(data) > MaxConfigBytes {
		return nil, configErrorf("config.json", "give the model's own config.json (a few kilobytes), not weights or an index",
			"the config is %d bytes; at most %d are read", len(data), MaxConfigBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil || top == nil {
		return nil, configErrorf("config.json", "give the model's config.json as a JSON object",
			"the config is not a JSON object: %s", jsonProblem(err))
	}
	if _, err := dec.Token(); err == nil {
		return nil, configErrorf("config.json", "give exactly one JSON object", "the config has data after its JSON object")
	}
	r, err := newReader(top)
	if err != nil {
		return nil, err
	}
	m := &Model{Architecture: r.architecture(), ModelType: r.str("model_type")}
	if what, ok := unmodelled[m.Architecture]; ok && refuseUnmodelled {
		return nil, configErrorf("architectures", "give kvBuffers (and stateBuffers) explicitly for this model",
			"%s is cached by the engine's %s, which the derivation does not model", m.Architecture, what)
	}
	switch {
	case hybridArchitectures[m.Architecture]:
		m.Family = FamilyHybrid
		err = r.readHybrid(m)
	case mlaArchitectures[m.Architecture] || r.present("kv_lora_rank"):
		m.Family = FamilyMLA
		err = r.readMLA(m)
	default:
		m.Family = FamilyDense
		err = r.readDense(m)
	}
	if err != nil {
		return nil, err
	}
	if m.DraftLayers, err = r.draftLayers(); err != nil {
		return nil, err
	}
	return m, nil
}

func jsonProblem(err error) string {
	if err == nil {
		return "null"
	}
	return err.Error()
}

// reader reads keys of the text config (the config itself, or its
// text_config object for multimodal models, as the engine does) and names
// them with their path in errors.
type reader struct {
	top, text map[string]any
	prefix    string
}

func newReader(top map[string]any) (*reader, error) {
	r := &reader{top: top, text: top}
	if tc, ok := top["text_config"]; ok && tc != nil {
		obj, ok := tc.(map[string]any)
		if !ok {
			return nil, configErrorf("text_config", "give text_config as a JSON object", "text_config is %s, not an object", describe(tc))
		}
		r.text, r.prefix = obj, "text_config."
	}
	return r, nil
}

// architecture is the first entry of architectures (the top-level list, or
// text_config's).
func (r *reader) architecture() string {
	for _, obj := range []map[string]any{r.top, r.text} {
		if list, ok := obj["architectures"].([]any); ok && len(list) > 0 {
			if s, ok := list[0].(string); ok {
				return s
			}
		}
	}
	return ""
}

func (r *reader) str(key string) string {
	if s, ok := r.top[key].(string); ok {
		return s
	}
	return ""
}

// present reports whether the text config has key with a non-null value.
func (r *reader) present(key string) bool { return r.text[key] != nil }

// get reads key as an integer in [lo, hi] (ok false when absent or null).
// An absent key is read under its older names (keyAliases).
func (r *reader) get(key string, lo, hi int64) (v int64, ok bool, err error) {
	if v, ok, err = intIn(r.text, r.prefix, key, lo, hi); ok || err != nil {
		return v, ok, err
	}
	for _, alias := range keyAliases[key] {
		if v, ok, err = intIn(r.text, r.prefix, alias, lo, hi); ok || err != nil {
			return v, ok, err
		}
	}
	return 0, false, nil
}

// need reads a key that must be present.
func (r *reader) need(key string, lo, hi int64, why string) (int64, error) { //nolint:unparam // lo and hi are the key's bounds, as get takes them; every key needed so far starts at 1
	v, ok, err := r.get(key, lo, hi)
	if err == nil && !ok {
		err = configErrorf(r.prefix+key, "add "+key+" from the model's config.json", "missing; %s", why)
	}
	return v, err
}

// orDefault reads a key, or gives def (noting it) when it is absent.
func (r *reader) orDefault(m *Model, key string, lo, hi, def int64, whose string) (int64, error) { //nolint:unparam // lo and hi are the key's bounds, as get takes them; every defaulted key so far starts at 1
	v, ok, err := r.get(key, lo, hi)
	if err == nil && !ok {
		v = def
		m.Notes = append(m.Notes, fmt.Sprintf("%s absent: %d, %s default", key, def, whose))
	}
	return v, err
}

func intIn(obj map[string]any, prefix, key string, lo, hi int64) (int64, bool, error) {
	raw, ok := obj[key]
	if !ok || raw == nil {
		return 0, false, nil
	}
	fix := fmt.Sprintf("give %s as an integer from %d to %d", key, lo, hi)
	n, isNum := raw.(json.Number)
	if !isNum {
		return 0, false, configErrorf(prefix+key, fix, "%s is not a number", describe(raw))
	}
	v, err := n.Int64()
	if err != nil {
		return 0, false, configErrorf(prefix+key, fix, "%s is not an integer", n)
	}
	if v < lo || v > hi {
		return 0, false, configErrorf(prefix+key, fix, "%d is out of range", v)
	}
	return v, true, nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%v", v)
}

// layers is num_hidden_layers (num_layers in older configs).
func (r *reader) layers() (int64, error) {
	v, ok, err := r.get("num_hidden_layers", 1, MaxLayers)
	if err != nil || ok {
		return v, err
	}
	v, ok, err = r.get("num_layers", 1, MaxLayers)
	if err == nil && !ok {
		err = configErrorf(r.prefix+"num_hidden_layers", "add num_hidden_layers from the model's config.json", "missing (and no num_layers); every layer has its own KV buffers")
	}
	return v, err
}

// draftLayers are the layers of the MTP draft model: mtp_num_hidden_layers,
// else num_nextn_predict_layers, as the engine reads them for its draft worker.
func (r *reader) draftLayers() (int64, error) {
	for _, key := range []string{"mtp_num_hidden_layers", "num_nextn_predict_layers"} {
		v, ok, err := r.get(key, 0, MaxLayers)
		if err != nil || ok && (v > 0 || key == "mtp_num_hidden_layers") {
			return v, err
		}
	}
	return 0, nil
}

// heads reads num_attention_heads (or d.heads when absent and d.heads > 0)
// and the KV heads (kvHeads: absent, MHA, or d.kvHeads when > 0) and
// requires the KV heads to divide the attention heads.
func (r *reader) heads(m *Model, d classDefault) (err error) {
	if d.heads > 0 {
		m.AttentionHeads, err = r.orDefault(m, "num_attention_heads", 1, maxHeads, d.heads, d.whose)
	} else {
		m.AttentionHeads, err = r.need("num_attention_heads", 1, maxHeads, "the engine splits attention heads over TP ranks")
	}
	if err != nil {
		return err
	}
	kv, kvKey, ok, err := r.kvHeads(m)
	switch {
	case err != nil:
		return err
	case ok:
		m.KVHeads = kv
	case d.kvHeads > 0:
		m.KVHeads = d.kvHeads
		m.Notes = append(m.Notes, fmt.Sprintf("%s absent: %d, %s default", kvKey, d.kvHeads, d.whose))
	default:
		m.KVHeads = m.AttentionHeads
		m.Notes = append(m.Notes, fmt.Sprintf("%s absent: multi-head attention, %d KV heads (num_attention_heads)", kvKey, m.AttentionHeads))
	}
	if m.AttentionHeads%m.KVHeads != 0 {
		return configErrorf(kvKey, "check the config: every KV head serves the same number of query heads",
			"%d KV heads do not divide num_attention_heads %d", m.KVHeads, m.AttentionHeads)
	}
	return nil
}

func (r *reader) readDense(m *Model) (err error) {
	d := classDefaults[r.textModelType()]
	if err = r.heads(m, d); err != nil {
		return err
	}
	if d.layers > 0 {
		m.Layers, err = r.orDefault(m, "num_hidden_layers", 1, MaxLayers, d.layers, d.whose)
	} else {
		m.Layers, err = r.layers()
	}
	if err != nil {
		return err
	}
	return r.headDim(m, d.headDim, d.whose)
}

// headDim is head_dim, or hidden_size / num_attention_heads when absent
// (integer division, as the engine computes it); def > 0 replaces the
// quotient (a config class whose own default applies).
func (r *reader) headDim(m *Model, def int64, whose string) error {
	v, ok, err := r.get("head_dim", 1, maxDim)
	if err != nil || ok {
		m.HeadDim = v
		return err
	}
	if def > 0 {
		m.HeadDim = def
		m.Notes = append(m.Notes, fmt.Sprintf("head_dim absent: %d, %s default", def, whose))
		return nil
	}
	hidden, err := r.need("hidden_size", 1, maxHidden, "head_dim is absent, so it is hidden_size / num_attention_heads")
	if err != nil {
		return err
	}
	if m.HeadDim = hidden / m.AttentionHeads; m.HeadDim < 1 || m.HeadDim > maxDim {
		return configErrorf(r.prefix+"hidden_size", "add head_dim from the model's config.json",
			"head_dim is absent and hidden_size %d / num_attention_heads %d = %d is not a head dimension from 1 to %d", hidden, m.AttentionHeads, m.HeadDim, maxDim)
	}
	m.Notes = append(m.Notes, fmt.Sprintf("head_dim absent: hidden_size %d / num_attention_heads %d = %d", hidden, m.AttentionHeads, m.HeadDim))
	return nil
}

func (r *reader) readMLA(m *Model) (err error) {
	if m.AttentionHeads, err = r.need("num_attention_heads", 1, maxHeads, "the engine splits attention heads over TP ranks"); err != nil {
		return err
	}
	if m.Layers, err = r.layers(); err != nil {
		return err
	}
	if doubleAttentionLayers[m.Architecture] {
		m.Layers *= 2
		m.Notes = append(m.Notes, fmt.Sprintf("%s has two attention layers per layer: %d latent buffers", m.Architecture, m.Layers))
		if m.Layers > MaxLayers {
			return configErrorf(r.prefix+"num_hidden_layers", "", "%d attention layers; at most %d are supported", m.Layers, MaxLayers)
		}
	}
	// The latent keys live beside kv_lora_rank: in the text config when it
	// has them, else at the top (as the engine looks for them).
	obj, prefix := r.text, r.prefix
	if r.text["kv_lora_rank"] == nil && r.top["kv_lora_rank"] != nil {
		obj, prefix = r.top, ""
	}
	why := "MLA caches kv_lora_rank + qk_rope_head_dim values per token and layer"
	lora, err := needIn(obj, prefix, "kv_lora_rank", why)
	if err != nil {
		return err
	}
	rope, err := needIn(obj, prefix, "qk_rope_head_dim", why)
	if err != nil {
		return err
	}
	m.LatentDim = lora + rope
	return nil
}

func needIn(obj map[string]any, prefix, key, why string) (int64, error) {
	v, ok, err := intIn(obj, prefix, key, 1, maxDim)
	if err == nil && !ok {
		err = configErrorf(prefix+key, "add "+key+" from the model's config.json", "missing; %s", why)
	}
	return v, err
}

// The engine's Qwen3.5 text config class supplies these when a key is absent.
const qwen35 = "Qwen3.5 config class"

func (r *reader) readHybrid(m *Model) (err error) {
	if err = r.heads(m, classDefault{kvHeads: 2, whose: qwen35}); err != nil {
		return err
	}
	if err = r.headDim(m, 256, qwen35); err != nil {
		return err
	}
	layers, err := r.orDefault(m, "num_hidden_layers", 1, MaxLayers, 48, qwen35)
	if err != nil {
		return err
	}
	interval, err := r.need("full_attention_interval", 1, MaxLayers, "every full_attention_interval-th layer is full attention, the others linear attention")
	if err != nil {
		return err
	}
	// Layer i is full attention when (i+1) is a multiple of the interval.
	m.Layers = layers / interval
	m.MambaLayers = layers - m.Layers
	var kernel, keyDim, valueDim, keyHeads int64
	for _, k := range []struct {
		key string
		dst *int64
		def int64
	}{
		{"linear_conv_kernel_dim", &kernel, 4}, {"linear_key_head_dim", &keyDim, 128},
		{"linear_value_head_dim", &valueDim, 128}, {"linear_num_key_heads", &keyHeads, 16},
		{"linear_num_value_heads", &m.SSMHeads, 32},
	} {
		if *k.dst, err = r.orDefault(m, k.key, 1, maxDim, k.def, qwen35); err != nil {
			return err
		}
	}
	if kernel < 2 {
		return configErrorf(r.prefix+"linear_conv_kernel_dim", "check the config", "%d: the convolution state keeps kernel - 1 taps, so the kernel needs at least 2", kernel)
	}
	// The convolution runs over the query and key heads and the value
	// heads: conv_dim channels of kernel - 1 taps.
	m.ConvChannels = keyDim*keyHeads*2 + valueDim*m.SSMHeads
	m.ConvTaps = kernel - 1
	m.SSMHeadValues = keyDim * valueDim
	return nil
}

// String names the model in one line.
func (m *Model) String() string {
	name := m.Architecture
	if name == "" {
		name = strings.TrimSpace(m.ModelType)
	}
	if name == "" {
		name = "model"
	}
	return name
}

// Describe says in one line what sized the buffers: the architecture, its
// family, layers and heads, and the defaults that were applied.
func (m *Model) Describe() string {
	var b strings.Builder
	b.WriteString(m.String())
	switch m.Family {
	case FamilyMLA:
		fmt.Fprintf(&b, " (MLA): %d layers of %d latent values (kv_lora_rank + qk_rope_head_dim), %d attention heads", m.Layers, m.LatentDim, m.AttentionHeads)
	case FamilyHybrid:
		fmt.Fprintf(&b, " (hybrid): %d full-attention layers with %d KV heads of head_dim %d (%d attention heads), %d linear-attention layers (%d convolution channels, %d value heads of %d values)",
			m.Layers, m.KVHeads, m.HeadDim, m.AttentionHeads, m.MambaLayers, m.ConvChannels, m.SSMHeads, m.SSMHeadValues)
	default:
		fmt.Fprintf(&b, " (MHA/GQA/MQA): %d layers, %d KV heads of head_dim %d, %d attention heads", m.Layers, m.KVHeads, m.HeadDim, m.AttentionHeads)
	}
	if m.DraftLayers > 0 {
		fmt.Fprintf(&b, ", %d MTP draft layer(s)", m.DraftLayers)
	}
	for _, n := range m.Notes {
		b.WriteString("; " + n)
	}
	return b.String()
}

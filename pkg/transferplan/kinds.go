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

package transferplan

// BufferKind is the role of one buffer, as named on the wire (v1 fragments).
type BufferKind string

const (
	TargetK    BufferKind = "target_k"
	TargetV    BufferKind = "target_v"
	DraftK     BufferKind = "draft_k"
	DraftV     BufferKind = "draft_v"
	MambaState BufferKind = "mamba_state"
)

// Valid reports whether k is one of the kinds the wire protocol knows.
func (k BufferKind) Valid() bool {
	switch k {
	case TargetK, TargetV, DraftK, DraftV, MambaState:
		return true
	}
	return false
}

// IsKV reports whether k lives in the KV buffer index space.
func (k BufferKind) IsKV() bool { return k.Valid() && k != MambaState }

// PlanKind names how a decode rank's plan was made.
type PlanKind string

const (
	// PlanIdentity: prefill and decode shard identically; whole items move
	// from prefill rank d to decode rank d.
	PlanIdentity PlanKind = "identity"
	// PlanFragmented: byte ranges of items move from several prefill ranks.
	PlanFragmented PlanKind = "fragmented"
	// PlanMLA: every rank holds the whole latent cache; one source per decode
	// rank, the others of its range get dummy messages.
	PlanMLA PlanKind = "mla"
)

// AttentionBackend is the attention family of the model.
type AttentionBackend string

const (
	MHA AttentionBackend = "MHA"
	MLA AttentionBackend = "MLA"
)

// SpecName is the PDPair spelling of a kind, the one people read: the
// kvBuffers kind (TargetK, TargetV, DraftK, DraftV), and State for the
// buffers of stateBuffers, which have no kind field. The wire keeps its own
// spelling (the BufferKind's value, target_k …).
func (k BufferKind) SpecName() string {
	switch k {
	case TargetK:
		return "TargetK"
	case TargetV:
		return "TargetV"
	case DraftK:
		return "DraftK"
	case DraftV:
		return "DraftV"
	case MambaState:
		return "State"
	}
	return string(k)
}

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

import "github.com/pdtopo/pdtopo/pkg/pyjson"

// RankFields are the keys of a prefill rank's PUT /route body that both
// wires share; each wire's RankRegistration adds its own.
type RankFields struct {
	Role      string `json:"role"`
	WorldSize int    `json:"world_size"`
	DPSize    int    `json:"dp_size"`
	RankIP    string `json:"rank_ip"`
	RankPort  int    `json:"rank_port"`
	// EngineRank is the rank in the whole prefill world; the server files it
	// under dp group EngineRank/(WorldSize/DPSize) and that group's TP rank
	// EngineRank%(WorldSize/DPSize).
	EngineRank int `json:"engine_rank"`
}

// RankFieldKeys are the JSON keys of RankFields, in the order senders write
// them.
var RankFieldKeys = []string{"role", "world_size", "dp_size", "rank_ip", "rank_port", "engine_rank"}

// Validate checks what the bootstrap server and the decode side rely on,
// naming kind in the error.
func (f *RankFields) Validate(kind MessageKind) error {
	if f.Role == "" {
		return FieldError(kind, "role", ReasonInvalidValue, "empty")
	}
	if err := CheckSizes(kind, "world_size", "dp_size", f.WorldSize, f.DPSize); err != nil {
		return err
	}
	if f.EngineRank < 0 || f.EngineRank >= f.WorldSize {
		return FieldError(kind, "engine_rank", ReasonOutOfRange, "%d is outside [0, %d)", f.EngineRank, f.WorldSize)
	}
	if err := CheckText(kind, -1, "rank_ip", f.RankIP); err != nil {
		return err
	}
	return CheckPort(kind, -1, "rank_port", f.RankPort)
}

// WritePython writes the fields as the reference's requests.put(json=...)
// does, at the start of the body.
func (f *RankFields) WritePython(o *pyjson.Object) {
	o.Str("role", f.Role)
	o.Int("world_size", int64(f.WorldSize))
	o.Int("dp_size", int64(f.DPSize))
	o.Str("rank_ip", f.RankIP)
	o.Int("rank_port", int64(f.RankPort))
	o.Int("engine_rank", int64(f.EngineRank))
}

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

package contract

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/pyjson"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Parse decodes a contract's wire bytes, refusing exactly what the
// engine's CacheTransferContract.from_wire_bytes refuses: empty or longer
// than MaxBytes; not JSON as Python reads it; not an object; a
// missing key; a group, plane, field or group spec with a key its dataclass
// does not have or without one it needs; an unknown dtype; a group spec
// that declares neither row geometry nor a checkpoint granularity, or
// declares them wrongly; a transfer field with an empty id, twice the same
// id, an id the plan does not hold, or a partition that does not fit its
// field. Anything else passes, as it does in the engine (unknown top-level
// keys included). Errors are *LayoutError with ReasonContractInvalid or
// ReasonContractTooLarge and the JSON path of the offending value.
func Parse(raw []byte) (*CacheContract, error) {
	if len(raw) == 0 || len(raw) > MaxBytes {
		return nil, withContractFix(transferplan.LayoutErrorf(transferplan.ReasonContractTooLarge, "", "the contract is %d bytes; the engine takes 1 to %d", len(raw), MaxBytes))
	}
	v, err := pyjson.Parse(raw)
	if err != nil {
		return nil, withContractFix(transferplan.LayoutErrorf(transferplan.ReasonContractInvalid, "", "invalid contract JSON: %v", err))
	}
	if v.Kind() != pyjson.Dict {
		return nil, withContractFix(transferplan.LayoutErrorf(transferplan.ReasonContractInvalid, "", "the contract must be a JSON object, got %s", v.TypeName()))
	}
	c, err := buildContract(v)
	if err != nil {
		return nil, withContractFix(err)
	}
	c.canonical = c.encodeCanonical()
	return c, nil
}

// decodeError builds the decoder's refusal of the value at path.
func decodeError(path, format string, args ...any) error {
	return transferplan.LayoutErrorf(transferplan.ReasonContractInvalid, path, format, args...)
}

// member is mapping[key] for a value that must be a dict holding key.
func member(v pyjson.Value, path, key string) (pyjson.Value, error) {
	if v.Kind() != pyjson.Dict {
		return pyjson.Value{}, decodeError(path, "must be a JSON object, got %s", v.TypeName())
	}
	m, ok := v.Get(key)
	if !ok {
		return pyjson.Value{}, decodeError(join(path, key), "is required")
	}
	return m, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// kwargs is Dataclass(**v): v must be a dict whose keys are among the
// dataclass's fields and include the required ones.
func kwargs(v pyjson.Value, path string, required, optional []string) error {
	if v.Kind() != pyjson.Dict {
		return decodeError(path, "must be a JSON object, got %s", v.TypeName())
	}
	for _, k := range v.Keys() {
		if !slices.Contains(required, k) && !slices.Contains(optional, k) {
			return decodeError(path, "unknown key %q (the keys are %s)", k, strings.Join(append(append([]string{}, required...), optional...), ", "))
		}
	}
	for _, k := range required {
		if _, ok := v.Get(k); !ok {
			return decodeError(join(path, k), "is required")
		}
	}
	return nil
}

// objects is `for x in v` where every x must be a mapping: a list of
// objects, or an empty string or object (which iterate over nothing).
func objects(v pyjson.Value, path string) ([]pyjson.Value, error) {
	elems, err := pyjson.Iterate(v)
	if err != nil {
		return nil, decodeError(path, "must be a list, got %s", v.TypeName())
	}
	for i, e := range elems {
		if e.Kind() != pyjson.Dict {
			return nil, decodeError(fmt.Sprintf("%s[%d]", path, i), "must be a JSON object, got %s", e.TypeName())
		}
	}
	return elems, nil
}

func buildContract(payload pyjson.Value) (*CacheContract, error) {
	c := &CacheContract{}
	plan, err := member(payload, "", "plan")
	if err != nil {
		return nil, err
	}
	for _, s := range []struct {
		key string
		dst *pyjson.Value
	}{{"prefix_granularity", &c.prefixGranularity}, {"lcm_block_bytes", &c.lcmBlockBytes}, {"num_lcm_blocks", &c.numLCMBlocks}} {
		if *s.dst, err = member(plan, "plan", s.key); err != nil {
			return nil, err
		}
	}
	if err := c.buildPlanLists(plan); err != nil {
		return nil, err
	}
	schema, err := member(payload, "", "transfer_schema")
	if err != nil {
		return nil, err
	}
	if err := c.buildGroupSpecs(payload); err != nil {
		return nil, err
	}
	if err := c.buildTransferFields(schema); err != nil {
		return nil, err
	}
	return c, c.validateSchema()
}

func (c *CacheContract) buildPlanLists(plan pyjson.Value) error {
	groups, err := member(plan, "plan", "groups")
	if err != nil {
		return err
	}
	elems, err := objects(groups, "plan.groups")
	if err != nil {
		return err
	}
	for i, g := range elems {
		if err := kwargs(g, fmt.Sprintf("plan.groups[%d]", i), []string{"group_id", "cache_blocks_per_lcm_block", "page_count"}, nil); err != nil {
			return err
		}
		c.groups = append(c.groups, contractGroupLayout{groupID: must(g, "group_id"), cacheBlocksPerLCMBlock: must(g, "cache_blocks_per_lcm_block"), pageCount: must(g, "page_count")})
	}
	planes, err := member(plan, "plan", "planes")
	if err != nil {
		return err
	}
	if elems, err = objects(planes, "plan.planes"); err != nil {
		return err
	}
	for i, p := range elems {
		if err := kwargs(p, fmt.Sprintf("plan.planes[%d]", i), []string{"plane_id", "bytes_per_lcm_block", "arena_offset_bytes"}, nil); err != nil {
			return err
		}
		c.planes = append(c.planes, contractPlane{planeID: must(p, "plane_id"), bytesPerLCMBlock: must(p, "bytes_per_lcm_block"), arenaOffsetBytes: must(p, "arena_offset_bytes")})
	}
	fields, err := member(plan, "plan", "fields")
	if err != nil {
		return err
	}
	if elems, err = objects(fields, "plan.fields"); err != nil {
		return err
	}
	for i, f := range elems {
		field, err := buildField(f, fmt.Sprintf("plan.fields[%d]", i))
		if err != nil {
			return err
		}
		c.fields = append(c.fields, field)
	}
	return nil
}

// must is a key kwargs has checked.
func must(v pyjson.Value, key string) pyjson.Value {
	m, _ := v.Get(key)
	return m
}

func orDefault(v pyjson.Value, key string, def pyjson.Value) pyjson.Value {
	if m, ok := v.Get(key); ok {
		return m
	}
	return def
}

func buildField(f pyjson.Value, path string) (contractField, error) {
	shape, err := member(f, path, "shape")
	if err != nil {
		return contractField{}, err
	}
	dims, err := pyjson.Iterate(shape) // tuple(field["shape"])
	if err != nil {
		return contractField{}, decodeError(join(path, "shape"), "must be a list, got %s", shape.TypeName())
	}
	if err := kwargs(f, path, []string{"group_id", "field_id", "plane_id", "shape", "dtype", "field_offset_bytes", "page_stride_bytes"}, nil); err != nil {
		return contractField{}, err
	}
	dtype := must(f, "dtype")
	if _, known := contractDTypeBytes[dtype.Text()]; dtype.Kind() != pyjson.Str || !known {
		return contractField{}, decodeError(join(path, "dtype"), "unsupported cache dtype %s", dtype.Repr())
	}
	return contractField{
		groupID: must(f, "group_id"), fieldID: must(f, "field_id"), planeID: must(f, "plane_id"),
		shape: dims, dtype: dtype.Text(), fieldOffsetBytes: must(f, "field_offset_bytes"), pageStrideBytes: must(f, "page_stride_bytes"),
	}, nil
}

var (
	groupSpecRequired = []string{"group_id", "retention"}
	groupSpecOptional = []string{"rows_per_page", "entry_stride_tokens", "sliding_window_tokens", "family", "transfer_policy", "checkpoint_granularity"}
	none              = pyjson.Value{} // the zero Value is None
)

func (c *CacheContract) buildGroupSpecs(payload pyjson.Value) error {
	specs, err := member(payload, "", "group_specs")
	if err != nil {
		return err
	}
	elems, err := objects(specs, "group_specs")
	if err != nil {
		return err
	}
	for i, s := range elems {
		path := fmt.Sprintf("group_specs[%d]", i)
		if err := kwargs(s, path, groupSpecRequired, groupSpecOptional); err != nil {
			return err
		}
		spec := contractGroupSpec{
			groupID: must(s, "group_id"), retention: must(s, "retention"),
			rowsPerPage: orDefault(s, "rows_per_page", none), entryStrideTokens: orDefault(s, "entry_stride_tokens", none),
			slidingWindowTokens: orDefault(s, "sliding_window_tokens", none), family: orDefault(s, "family", pyjson.String("history")),
			transferPolicy: orDefault(s, "transfer_policy", none), checkpointGranularity: orDefault(s, "checkpoint_granularity", none),
		}
		if err := spec.check(path); err != nil {
			return err
		}
		c.groupSpecs = append(c.groupSpecs, spec)
	}
	return nil
}

// check is CacheGroupSpec.__post_init__: a group declares either row
// geometry (rows_per_page and entry_stride_tokens, both > 0) or, for a
// state-family group only, a checkpoint granularity > 0.
func (s contractGroupSpec) check(path string) error {
	hasRows := s.rowsPerPage.Kind() != pyjson.None || s.entryStrideTokens.Kind() != pyjson.None
	if s.checkpointGranularity.Kind() != pyjson.None {
		switch {
		case hasRows:
			return decodeError(path, "checkpoint_granularity excludes rows_per_page and entry_stride_tokens")
		case !pyjson.Equal(s.family, pyjson.String("state")):
			return decodeError(join(path, "family"), "checkpoint_granularity is only valid for state-family groups, got family %s", s.family.Repr())
		}
		if le, err := pyjson.LessEqualZero(s.checkpointGranularity); err != nil || le {
			return decodeError(join(path, "checkpoint_granularity"), "must be > 0, got %s", s.checkpointGranularity.Repr())
		}
		return nil
	}
	if s.rowsPerPage.Kind() == pyjson.None || s.entryStrideTokens.Kind() == pyjson.None {
		return decodeError(path, "declare either row geometry (rows_per_page and entry_stride_tokens) or checkpoint_granularity")
	}
	for _, v := range []struct {
		name string
		val  pyjson.Value
	}{{"rows_per_page", s.rowsPerPage}, {"entry_stride_tokens", s.entryStrideTokens}} {
		if le, err := pyjson.LessEqualZero(v.val); err != nil || le {
			return decodeError(join(path, v.name), "must be > 0, got %s", v.val.Repr())
		}
	}
	return nil
}

func (c *CacheContract) buildTransferFields(schema pyjson.Value) error {
	fields, err := member(schema, "transfer_schema", "fields")
	if err != nil {
		return err
	}
	elems, err := pyjson.Iterate(fields)
	if err != nil {
		return decodeError("transfer_schema.fields", "must be a list, got %s", fields.TypeName())
	}
	seen := map[string]bool{}
	nan := 0
	for i, f := range elems {
		path := fmt.Sprintf("transfer_schema.fields[%d]", i)
		id, err := member(f, path, "field_id")
		if err != nil {
			return err
		}
		part, err := buildPartition(f, path)
		if err != nil {
			return err
		}
		if !id.Truthy() {
			return decodeError(join(path, "field_id"), "must be non-empty, got %s", id.Repr())
		}
		c.transferFields = append(c.transferFields, contractTransferField{fieldID: id, partition: part})
		// CacheTransferSchema.__post_init__: ids hashable and unique (once
		// every spec is built, but a refusal is a refusal).
		key, ok := pyjson.HashKey(id, &nan)
		if !ok {
			return decodeError(join(path, "field_id"), "must be hashable, got %s", id.TypeName())
		}
		if seen[key] {
			return decodeError(join(path, "field_id"), "%s appears twice in the transfer schema", id.Repr())
		}
		seen[key] = true
	}
	return nil
}

// buildPartition reads a partition; its values are checked against the
// field's shape by validateSchema.
func buildPartition(f pyjson.Value, path string) (contractPartition, error) {
	part, err := member(f, path, "partition")
	if err != nil {
		return contractPartition{}, err
	}
	path = join(path, "partition")
	axis, err := member(part, path, "axis")
	if err != nil {
		return contractPartition{}, err
	}
	extent, err := member(part, path, "global_extent")
	if err != nil {
		return contractPartition{}, err
	}
	parts, err := member(part, path, "global_parts")
	if err != nil {
		return contractPartition{}, err
	}
	elems, err := pyjson.Iterate(parts)
	if err != nil {
		return contractPartition{}, decodeError(join(path, "global_parts"), "must be a list, got %s", parts.TypeName())
	}
	p := contractPartition{axisValue: axis, axis: -1, globalExtent: extent, globalParts: elems}
	if a, ok := axis.Int64(); ok && a >= 0 && a < 1<<31 {
		p.axis = int(a)
	}
	return p, nil
}

// validateSchema is CacheTransferSchema.validate(plan): every transfer
// field names a planned field (the last of that id), and its partition fits
// that field's shape.
func (c *CacheContract) validateSchema() error {
	planned := map[string]int{}
	nan := 0
	for i, f := range c.fields {
		key, ok := pyjson.HashKey(f.fieldID, &nan)
		if !ok {
			return decodeError(fmt.Sprintf("plan.fields[%d].field_id", i), "must be hashable, got %s", f.fieldID.TypeName())
		}
		planned[key] = i
	}
	var unknown []string
	for _, tf := range c.transferFields {
		key, _ := pyjson.HashKey(tf.fieldID, &nan)
		if _, ok := planned[key]; !ok {
			unknown = append(unknown, tf.fieldID.Repr())
		}
	}
	if len(unknown) > 0 {
		return decodeError("transfer_schema.fields", "references fields the plan does not hold: %s", strings.Join(unknown, ", "))
	}
	for i, tf := range c.transferFields {
		key, _ := pyjson.HashKey(tf.fieldID, &nan)
		field := c.fields[planned[key]]
		if why := tf.partition.validate(field.shape); why != "" {
			return decodeError(fmt.Sprintf("transfer_schema.fields[%d].partition", i), "field %s: %s", tf.fieldID.Repr(), why)
		}
	}
	return nil
}

// validate is CacheFieldPartition.validate against a rank-local shape; it
// returns why the partition does not fit, or "".
func (p contractPartition) validate(shape []pyjson.Value) string {
	if p.axis < 0 || p.axis >= len(shape) {
		return fmt.Sprintf("axis must be an integer in [0, %d)", len(shape))
	}
	if p.globalExtent.Kind() != pyjson.Int {
		return fmt.Sprintf("global_extent must be an integer, got %s", p.globalExtent.Repr())
	}
	local := shape[p.axis]
	if less, err := pyjson.Less(p.globalExtent, local); err != nil || less {
		return fmt.Sprintf("global_extent %s is smaller than the local extent %s", p.globalExtent.Repr(), local.Repr())
	}
	distinct, mod, err := pyjson.DivMod(p.globalExtent, local)
	if err != nil || mod.Truthy() {
		return fmt.Sprintf("global_extent %s is not divisible by the local extent %s", p.globalExtent.Repr(), local.Repr())
	}
	if len(p.globalParts) == 0 {
		return ""
	}
	bad := fmt.Sprintf("global_parts %s must be 2 to 16 positive integers, each divisible by the %s distinct shards, summing to %s",
		pyjson.ReprList(p.globalParts), distinct.Repr(), p.globalExtent.Repr())
	if len(p.globalParts) < 2 || len(p.globalParts) > 16 {
		return bad
	}
	sum := new(big.Int)
	for _, part := range p.globalParts {
		if part.Kind() != pyjson.Int || part.BigInt().Sign() <= 0 {
			return bad
		}
		if _, m, err := pyjson.DivMod(part, distinct); err != nil || m.Truthy() {
			return bad
		}
		sum.Add(sum, part.BigInt())
	}
	if sum.Cmp(p.globalExtent.BigInt()) != 0 {
		return bad
	}
	return ""
}

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
	"strings"

	"github.com/pdtopo/pdtopo/pkg/pyjson"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// CheckPair applies the engine's peer check (validate_cache_peer_layout)
// to a prefill and a decode contract: equal prefix granularity; the same
// cache groups in the same order with the same semantics; in each group
// the same fields (by id, in id order) with the same dtype, partition and
// global shape. The first difference is returned as a *LayoutError whose
// reason says what kind of difference it is and whose message names the
// field and both values.
func CheckPair(prefill, decode *CacheContract) error {
	if !pyjson.Equal(prefill.prefixGranularity, decode.prefixGranularity) {
		return mismatch(transferplan.ReasonContractMismatchPrefixGranularity, "plan.prefix_granularity", "prefix_granularity",
			prefill.prefixGranularity.Repr(), decode.prefixGranularity.Repr())
	}
	pg, dg := groupIDs(prefill), groupIDs(decode)
	if !pyjson.EqualAll(pg, dg) {
		return mismatch(transferplan.ReasonContractMismatchGroupOrder, "group_specs", "cache groups (in order)", pyjson.ReprList(pg), pyjson.ReprList(dg))
	}
	for i := range prefill.groupSpecs {
		if err := checkGroupPair(i, prefill, decode); err != nil {
			return err
		}
	}
	return nil
}

func groupIDs(c *CacheContract) []pyjson.Value {
	ids := make([]pyjson.Value, len(c.groupSpecs))
	for i, g := range c.groupSpecs {
		ids[i] = g.groupID
	}
	return ids
}

// mismatch builds the error for one differing value.
func mismatch(reason transferplan.Reason, field, what, prefill, decode string) *transferplan.LayoutError {
	return transferplan.LayoutErrorf(reason, field, "%s differs: prefill %s, decode %s", what, prefill, decode)
}

// groupAttributes are the spec attributes the engine compares, in its order.
var groupAttributes = []struct {
	name string
	get  func(contractGroupSpec) pyjson.Value
}{
	{"family", func(s contractGroupSpec) pyjson.Value { return s.family }},
	{"rows_per_page", func(s contractGroupSpec) pyjson.Value { return s.rowsPerPage }},
	{"entry_stride_tokens", func(s contractGroupSpec) pyjson.Value { return s.entryStrideTokens }},
	{"checkpoint_granularity", func(s contractGroupSpec) pyjson.Value { return s.checkpointGranularity }},
	{"retention", func(s contractGroupSpec) pyjson.Value { return s.retention }},
	{"sliding_window_tokens", func(s contractGroupSpec) pyjson.Value { return s.slidingWindowTokens }},
	{"transfer_policy", func(s contractGroupSpec) pyjson.Value { return s.transferPolicy }},
}

func checkGroupPair(i int, prefill, decode *CacheContract) error {
	ps, ds := prefill.groupSpecs[i], decode.groupSpecs[i]
	group := fmt.Sprintf("group_specs[%d]", i)
	for _, a := range groupAttributes {
		if p, d := a.get(ps), a.get(ds); !pyjson.Equal(p, d) {
			return mismatch(transferplan.ReasonContractMismatchGroupSemantics, group+"."+a.name,
				fmt.Sprintf("cache group %s %s", ps.groupID.Repr(), a.name), p.Repr(), d.Repr())
		}
	}
	pf, okP := prefill.fieldsForGroup(ps.groupID)
	df, okD := decode.fieldsForGroup(ds.groupID)
	if !okP || !okD {
		return transferplan.LayoutErrorf(transferplan.ReasonContractUnsupportedValue, group, "the fields of cache group %s have ids that are not all strings, which cannot be ordered", ps.groupID.Repr())
	}
	if !sameFieldIDs(pf, df) {
		return mismatch(transferplan.ReasonContractMismatchFieldOrder, group, fmt.Sprintf("the fields of cache group %s", ps.groupID.Repr()),
			fieldIDList(pf), fieldIDList(df))
	}
	for k := range pf {
		if err := checkFieldPair(prefill, decode, pf[k], df[k]); err != nil {
			return err
		}
	}
	return nil
}

func sameFieldIDs(a, b []contractField) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !pyjson.Equal(a[i].fieldID, b[i].fieldID) {
			return false
		}
	}
	return true
}

func fieldIDList(fs []contractField) string {
	ids := make([]pyjson.Value, len(fs))
	for i, f := range fs {
		ids[i] = f.fieldID
	}
	return pyjson.ReprList(ids)
}

func checkFieldPair(prefill, decode *CacheContract, pf, df contractField) error {
	field := "plan.fields " + pf.fieldID.Repr()
	what := func(attr string) string { return fmt.Sprintf("field %s %s", pf.fieldID.Repr(), attr) }
	pp, hasP := prefill.partitionFor(pf.fieldID)
	dp, hasD := decode.partitionFor(df.fieldID)
	pGlobal, okP := globalShape(pf.shape, pp, hasP)
	dGlobal, okD := globalShape(df.shape, dp, hasD)
	if !okP || !okD {
		return transferplan.LayoutErrorf(transferplan.ReasonContractUnsupportedValue, field, "field %s: its partition axis is outside its shape (a second field of the same id has another shape)", pf.fieldID.Repr())
	}
	switch {
	case pf.dtype != df.dtype:
		return mismatch(transferplan.ReasonContractMismatchFieldSemantics, field+".dtype", what("dtype"), pf.dtype, df.dtype)
	case hasP != hasD || hasP && !samePartition(pp, dp):
		return mismatch(transferplan.ReasonContractMismatchFieldSemantics, "transfer_schema "+pf.fieldID.Repr(), what("partition"),
			describePartition(pp, hasP), describePartition(dp, hasD))
	case !pyjson.EqualAll(pGlobal, dGlobal):
		return mismatch(transferplan.ReasonContractMismatchFieldSemantics, field+".shape", what("global shape (the rank-local shape with the partition axis at its global extent)"),
			pyjson.ReprList(pGlobal), pyjson.ReprList(dGlobal))
	}
	return nil
}

// globalShape is the shape with the partition axis set to the global extent.
func globalShape(shape []pyjson.Value, p contractPartition, has bool) ([]pyjson.Value, bool) {
	out := append([]pyjson.Value(nil), shape...)
	if has {
		if p.axis < 0 || p.axis >= len(out) {
			return nil, false
		}
		out[p.axis] = p.globalExtent
	}
	return out, true
}

func samePartition(a, b contractPartition) bool {
	return pyjson.Equal(a.axisValue, b.axisValue) && pyjson.Equal(a.globalExtent, b.globalExtent) && pyjson.EqualAll(a.globalParts, b.globalParts)
}

func describePartition(p contractPartition, has bool) string {
	if !has {
		return "none (replicated)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "axis %s of global extent %s", p.axisValue.Repr(), p.globalExtent.Repr())
	if len(p.globalParts) > 0 {
		fmt.Fprintf(&b, " in parts %s", pyjson.ReprList(p.globalParts))
	}
	return b.String()
}

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
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// Transfer policies of a cache group spec. The engine selects blocks with
// PolicyFullSuffix's rule for that policy and with PolicyLatestSnapshot's
// for any other value, null included; so does ManifestGroupRule.SlotCount.
const (
	PolicyFullSuffix     = "full_suffix"
	PolicyLatestSnapshot = "latest_snapshot"
	// RetentionSlidingWindow is the retention whose full_suffix groups keep
	// only the blocks the next token can attend.
	RetentionSlidingWindow = "sliding_window"
)

// ManifestLayout is what checking a block manifest needs of the decode
// rank's cache contract: the prefix granularity and, per group spec in
// order, how its blocks are selected and how many pages it has.
type ManifestLayout struct {
	PrefixGranularity int64
	Groups            []ManifestGroupRule
}

// ManifestGroupRule is one group spec of the decode contract, reduced to
// what selects and bounds its blocks.
type ManifestGroupRule struct {
	GroupID string
	// Policy is the spec's transfer_policy ("" for null).
	Policy string
	// BlockGranularity is the raw-token span of one block: the spec's
	// checkpoint_granularity, or rows_per_page × entry_stride_tokens.
	BlockGranularity int64
	// SlidingWindowTokens is the window of a sliding_window group, 0 for a
	// full-history one.
	SlidingWindowTokens int64
	// PageCount is the page_count of the contract's plan group of that id;
	// block ids lie in [1, PageCount).
	PageCount int64
}

// SlotCount is how many blocks the engine selects for the group (its
// _logical_slots): the suffix from prefixLen to promptLen, cut to the
// retained window for a sliding group, under full_suffix; the final block
// under any other policy. prefixLen is at least 0 and below promptLen.
func (g *ManifestGroupRule) SlotCount(prefixLen, promptLen int64) int64 {
	if g.Policy != PolicyFullSuffix {
		return 1
	}
	bg := g.BlockGranularity
	begin := prefixLen / bg
	if g.SlidingWindowTokens > 0 {
		retained := max(0, promptLen-g.SlidingWindowTokens+1)
		begin = max(begin, retained/bg)
	}
	end := promptLen / bg
	if promptLen%bg != 0 {
		end++
	}
	return max(0, end-begin)
}

// contractView is the part of a contract's wire JSON a ManifestLayout is
// read from. Pointers tell null and absent from zero.
type contractView struct {
	Plan *struct {
		PrefixGranularity *int64 `json:"prefix_granularity"`
		Groups            []struct {
			GroupID   *string `json:"group_id"`
			PageCount *int64  `json:"page_count"`
		} `json:"groups"`
	} `json:"plan"`
	GroupSpecs []struct {
		GroupID               *string `json:"group_id"`
		Retention             *string `json:"retention"`
		RowsPerPage           *int64  `json:"rows_per_page"`
		EntryStrideTokens     *int64  `json:"entry_stride_tokens"`
		SlidingWindowTokens   *int64  `json:"sliding_window_tokens"`
		TransferPolicy        *string `json:"transfer_policy"`
		CheckpointGranularity *int64  `json:"checkpoint_granularity"`
	} `json:"group_specs"`
}

// ManifestLayoutFromContract reads the ManifestLayout of a contract's wire
// JSON. It is not the contract's validator (pkg/transferplan parses
// contracts as strictly as the engine): it reads the fields manifest checks
// use and refuses, as ReasonContractUnusable, a contract with which the
// engine's validate_cache_manifest would crash or that its cache sizing
// refuses: no positive prefix_granularity, a group spec without a plan
// group of its id, a block granularity that is not positive, a sliding
// full_suffix group without a positive window.
func ManifestLayoutFromContract(contract []byte) (ManifestLayout, error) {
	if err := CheckEnvelope(contract); err != nil {
		return ManifestLayout{}, err
	}
	var v contractView
	dec := json.NewDecoder(bytes.NewReader(contract))
	if err := dec.Decode(&v); err != nil {
		return ManifestLayout{}, kvwire.FieldError(kvwire.KindContract, "", kvwire.ReasonContractUnusable, "%v", err)
	}
	unusable := func(field, format string, args ...any) (ManifestLayout, error) {
		return ManifestLayout{}, kvwire.FieldError(kvwire.KindContract, field, kvwire.ReasonContractUnusable, format, args...)
	}
	if v.Plan == nil || v.Plan.PrefixGranularity == nil || *v.Plan.PrefixGranularity < 1 {
		return unusable("plan.prefix_granularity", "absent or not positive")
	}
	pages := make(map[string]int64, len(v.Plan.Groups))
	for i, g := range v.Plan.Groups {
		if g.GroupID == nil || g.PageCount == nil {
			return unusable(fmt.Sprintf("plan.groups[%d]", i), "group_id or page_count is absent")
		}
		if _, dup := pages[*g.GroupID]; !dup { // the engine's plan.group() takes the first
			pages[*g.GroupID] = *g.PageCount
		}
	}
	l := ManifestLayout{PrefixGranularity: *v.Plan.PrefixGranularity, Groups: make([]ManifestGroupRule, len(v.GroupSpecs))}
	for i, spec := range v.GroupSpecs {
		field := func(k string) string { return fmt.Sprintf("group_specs[%d].%s", i, k) }
		if spec.GroupID == nil {
			return unusable(field("group_id"), "absent")
		}
		r := ManifestGroupRule{GroupID: *spec.GroupID}
		var ok bool
		if r.PageCount, ok = pages[r.GroupID]; !ok {
			return unusable(field("group_id"), "%q has no group in plan.groups", r.GroupID)
		}
		if spec.TransferPolicy != nil {
			r.Policy = *spec.TransferPolicy
		}
		switch {
		case spec.CheckpointGranularity != nil:
			r.BlockGranularity = *spec.CheckpointGranularity
		case spec.RowsPerPage != nil && spec.EntryStrideTokens != nil && *spec.RowsPerPage > 0 && *spec.EntryStrideTokens > 0:
			hi, lo := bits.Mul64(uint64(*spec.RowsPerPage), uint64(*spec.EntryStrideTokens))
			if hi != 0 || lo > 1<<63-1 {
				return unusable(field("rows_per_page"), "rows_per_page × entry_stride_tokens = %d × %d exceeds 64 bits", *spec.RowsPerPage, *spec.EntryStrideTokens)
			}
			r.BlockGranularity = int64(lo)
		}
		if r.BlockGranularity < 1 {
			return unusable(field("checkpoint_granularity"), "%q has no positive block granularity", r.GroupID)
		}
		if spec.Retention != nil && *spec.Retention == RetentionSlidingWindow {
			switch {
			case spec.SlidingWindowTokens != nil && *spec.SlidingWindowTokens > 0:
				r.SlidingWindowTokens = *spec.SlidingWindowTokens
			case r.Policy == PolicyFullSuffix:
				return unusable(field("sliding_window_tokens"), "%q is a sliding_window full_suffix group without a positive window", r.GroupID)
			}
		}
		l.Groups[i] = r
	}
	return l, nil
}

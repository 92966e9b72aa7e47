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

package planstore

import (
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	// Both wires' packages are linked in here (each registers its record
	// form), so whoever reads or writes plans knows both wires' records.
	_ "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
	planv1 "github.com/pdtopo/pdtopo/pkg/transferplan/v1"
)

// wireRules is what the published format does differently per wire.
type wireRules struct {
	// formatVersion is the version a publication of the wire's plans
	// carries (see FormatVersion).
	formatVersion int
	// sizePlans sizes the plans of an index's layout before any shard is
	// read; nil when the wire's record cannot (a contract pair's record
	// holds the contracts' hashes, not the contracts, so each rank's entry
	// is capped at MaxRankPlanBytes instead, as every entry is).
	sizePlans func(transferplan.LayoutRecord) (transferplan.PlanSize, error)
}

// wires holds the rules of every wire the format knows.
var wires = map[transferplan.Wire]wireRules{
	transferplan.WireV1: {formatVersion: 1, sizePlans: func(r transferplan.LayoutRecord) (transferplan.PlanSize, error) {
		return planv1.EstimatePlanSize(planv1.FromRecord(r))
	}},
	transferplan.WireCacheContract: {formatVersion: 2}, // version 2 added its keys
}

// rulesOf is the rules of a record's wire (an empty wire is v1). A wire
// the record decoder let through but the format does not know is published
// at the newest version, without a size check.
func rulesOf(layout transferplan.LayoutRecord) wireRules {
	if r, ok := wires[layout.Wire.OrV1()]; ok {
		return r
	}
	return wireRules{formatVersion: FormatVersion}
}

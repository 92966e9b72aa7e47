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
	"errors"
	"fmt"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// Every contract refusal ends with its fix, as layout refusals do
// (LayoutError.Fix). Sites that know the numbers (TP sizes, shards) set
// theirs; withContractFix gives the others the fix of their reason.

var contractFixes = map[transferplan.Reason]string{
	transferplan.ReasonContractInvalid:                   "publish the role's contract as the engine writes it (CacheTransferContract.to_wire_bytes())",
	transferplan.ReasonContractTooLarge:                  "publish the role's contract as the engine writes it (CacheTransferContract.to_wire_bytes(), at most 256 KiB)",
	transferplan.ReasonContractUnsupportedValue:          "publish the contract the engine's cache recipe builds: positive integer shapes and extents, string group and field ids",
	transferplan.ReasonContractMismatchPrefixGranularity: "run both roles with the same prefix granularity (page size in tokens)",
	transferplan.ReasonContractMismatchGroupOrder:        "run the same model (and draft model) with the same cache settings on both roles, so that both declare the same cache groups",
	transferplan.ReasonContractMismatchFieldOrder:        "run the same model (and draft model) on both roles, so that each cache group holds the same fields",
	transferplan.ReasonContractMismatchRankGeometry:      "publish the decode contract of a rank of a decode fleet of the decode TP size this pair names",
	transferplan.ReasonContractNoSourceFragments:         "give both roles the same TP size per DP group, or publish contracts whose cache groups hold the fields to move",
}

// withContractFix ends a contract refusal with its fix.
func withContractFix(err error) error {
	var le *transferplan.LayoutError
	if !errors.As(err, &le) || le.Fix != "" {
		return err
	}
	switch {
	case le.Reason == transferplan.ReasonContractMismatchGroupSemantics:
		attr := le.Field[strings.LastIndex(le.Field, ".")+1:]
		le.WithFix(fmt.Sprintf("give both roles the same %s for this cache group (the same model config and cache settings)", attr))
	case le.Reason == transferplan.ReasonContractMismatchFieldSemantics && strings.HasSuffix(le.Field, ".dtype"):
		le.WithFix("use the same KV cache dtype on both roles")
	case le.Reason == transferplan.ReasonContractMismatchFieldSemantics:
		le.WithFix("run the same model on both roles (the same KV heads, head size and state widths)")
	default:
		le.WithFix(contractFixes[le.Reason])
	}
	return err
}

// shardsFix names the TP sizes per DP group at which a role can hold the
// field: the engine lays a sharded field out with max(extent / TP, 1) units
// per rank, so a TP that divides the extent (or, with parts, every part) or
// is a multiple of it works.
func shardsFix(s *contractSegment, role string) string {
	g := s.globalExtent
	for _, p := range s.parts {
		g = gcd(g, p)
	}
	var ok []string
	for t := int64(1); t <= MaxTPSize && len(ok) < 8; t++ {
		if g%t == 0 || len(s.parts) == 1 && t%s.globalExtent == 0 {
			ok = append(ok, fmt.Sprint(t))
		}
	}
	return fmt.Sprintf("run the %s with a TP size per DP group among %s… (the field's %d units split evenly)", role, strings.Join(ok, ", "), s.globalExtent)
}

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

// Package topograph draws a PDPair's transfer topology: which decode TP rank
// pulls how many bytes per page from which prefill TP rank. It builds a
// rendering-neutral graph from a plan set and writes it as Graphviz DOT or as
// a self-contained SVG. It is pure: plans in, text out.
package topograph

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// Movement is what one target of a decode rank's plan moves per page.
type Movement struct {
	// BytesPerPage is the bytes landing on the decode rank per page: the sum
	// of the target's fragments, or for a target without fragments (identity,
	// MLA) the whole decode items of every buffer.
	BytesPerPage int64
	// WholeItems: the target has no fragments and copies whole items.
	WholeItems bool
	// Fragments is the number of fragments.
	Fragments int
}

// TargetMovement computes what target t of plan moves per page. Dummies move
// nothing.
func TargetMovement(plan transferplan.RoutePlan, t transferplan.PlanTarget, rec transferplan.LayoutRecord) Movement {
	if t.IsDummy {
		return Movement{}
	}
	if len(t.Fragments) == 0 {
		return Movement{BytesPerPage: WholeItemBytes(rec), WholeItems: true}
	}
	m := Movement{Fragments: len(t.Fragments)}
	for _, f := range t.Fragments {
		m.BytesPerPage += f.BytesPerPage
	}
	return m
}

// WholeItemBytes is one page of every buffer on one decode rank.
func WholeItemBytes(rec transferplan.LayoutRecord) int64 {
	var n int64
	for _, b := range rec.DecodeKVItemLens {
		n += b
	}
	for _, b := range rec.DecodeStateItemLens {
		n += b
	}
	return n
}

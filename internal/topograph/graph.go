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

package topograph

import (
	"fmt"
	"sort"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// MaxRanksPerSide is how many rank nodes a column shows before consecutive
// ranks are aggregated into one node: 64 keeps a column readable.
const MaxRanksPerSide = 64

// Role is a column of the picture.
type Role string

const (
	Prefill Role = "prefill"
	Decode  Role = "decode"
)

// Node is one TP rank of a DP group, or, when the side is aggregated, a run
// of consecutive TP ranks [Lo, Hi).
type Node struct {
	Role   Role
	ID     string // "prefill-3", or "prefill-0-3" for the ranks 0..3
	Lo, Hi int
	Label  string
	// IdleRanks counts the node's prefill ranks that no decode rank pulls
	// from; CoveredBy are the decode TP ranks that send them dummy messages.
	IdleRanks int
	CoveredBy []int
}

// Ranks is the number of TP ranks the node stands for.
func (n Node) Ranks() int { return n.Hi - n.Lo }

// Edge is what a decode rank (or an aggregated run) gets from a prefill rank
// (or run): real targets move bytes, dummy targets only get messages.
type Edge struct {
	From, To string // node IDs: prefill → decode, the direction the KV cache flows
	Dummy    bool
	// Routes is the number of (decode rank, target) pairs the edge stands for:
	// 1 unless a side is aggregated.
	Routes       int
	BytesPerPage int64 // summed over Routes; 0 for dummies
	Fragments    int
	WholeItems   bool
	// Read: the edge is a rank map's (the engine reads, pdtopo does not
	// size the bytes).
	Read bool
}

// Side is one column: the TP ranks of one DP group of a role.
type Side struct {
	Role    Role
	TPSize  int // the role's whole attention world
	DPSize  int
	TPPerDP int
	// PerNode is the number of ranks one node stands for (1 unless aggregated).
	PerNode int
	Nodes   []Node
	// AllGroups: the column holds the ranks of every DP group, numbered as
	// the engine numbers them (a rank map whose decode ranks are global).
	AllGroups bool
}

// Aggregated reports whether nodes stand for several ranks.
func (s Side) Aggregated() bool { return s.PerNode > 1 }

// Graph is the topology of one plan set, ready to draw.
type Graph struct {
	Name     string
	Kind     transferplan.PlanKind
	Layout   transferplan.LayoutRecord
	Prefill  Side
	Decode   Side
	Edges    []Edge
	Notes    []string // said in the picture: aggregation, DP groups
	Fragment int      // fragments over all plans
	// RankMap: the set is an engine's rank map (vLLM, SGLang), not plans:
	// edges say which prefill ranks a decode rank reads, not bytes.
	RankMap bool
}

// IsRankMap reports whether set is the rank map of an engine that moves
// the bytes itself: its plans have no plan kind, no fragments and no
// buffers to size.
func IsRankMap(set *transferplan.PlanSet) bool {
	return set != nil && len(set.Plans) > 0 && set.Plans[0].PlanKind == "" && len(set.Layout.KVBufferKinds) == 0
}

// Build makes the graph of a compatible plan set.
func Build(name string, set *transferplan.PlanSet) (*Graph, error) {
	if set == nil || !set.Compatible || len(set.Plans) == 0 {
		return nil, fmt.Errorf("topograph: no plans to draw for %q", name)
	}
	rec := set.Layout
	P, D := rec.Prefill.TPPerDP(), rec.Decode.TPPerDP()
	g := &Graph{Name: name, Kind: set.Plans[0].PlanKind, Layout: rec, RankMap: IsRankMap(set)}
	allGroups := g.RankMap && rec.Decode.DPSize > 1 && len(set.Plans) == rec.Decode.TPSize
	if allGroups {
		// SGLang numbers a decode rank by its global rank: every group's.
		D = rec.Decode.TPSize
	}
	if P < 1 || D != len(set.Plans) {
		return nil, fmt.Errorf("topograph: the layout has %d decode TP ranks per DP group but the set holds %d plans", D, len(set.Plans))
	}
	g.Prefill = newSide(Prefill, rec.Prefill, P)
	g.Decode = newSide(Decode, rec.Decode, D)
	if g.Decode.AllGroups = allGroups; allGroups {
		per := rec.Decode.TPPerDP()
		for i, n := range g.Decode.Nodes {
			if n.Ranks() == 1 {
				g.Decode.Nodes[i].Label = fmt.Sprintf("decode %d (DP %d · attention TP %d)", n.Lo, n.Lo/per, n.Lo%per)
			}
		}
	}
	if err := g.addEdges(set); err != nil {
		return nil, err
	}
	g.addNotes()
	return g, nil
}

func newSide(role Role, par transferplan.Parallelism, n int) Side {
	s := Side{Role: role, TPSize: par.TPSize, DPSize: par.DPSize, TPPerDP: n, PerNode: (n + MaxRanksPerSide - 1) / MaxRanksPerSide}
	for lo := 0; lo < n; lo += s.PerNode {
		hi := min(lo+s.PerNode, n)
		node := Node{Role: role, Lo: lo, Hi: hi}
		if hi-lo == 1 {
			node.ID, node.Label = fmt.Sprintf("%s-%d", role, lo), fmt.Sprintf("%s TP %d", role, lo)
		} else {
			node.ID, node.Label = fmt.Sprintf("%s-%d-%d", role, lo, hi-1), fmt.Sprintf("%s TP %d–%d", role, lo, hi-1)
		}
		s.Nodes = append(s.Nodes, node)
	}
	return s
}

// nodeOf is the index of the node holding rank r.
func (s Side) nodeOf(r int) int { return r / s.PerNode }

type edgeKey struct {
	from, to int
	dummy    bool
}

func (g *Graph) addEdges(set *transferplan.PlanSet) error {
	P := g.Prefill.TPPerDP
	edges := map[edgeKey]*Edge{}
	var order []edgeKey
	covered := map[int]map[int]bool{} // prefill node → decode ranks covering its idle ranks
	for _, plan := range set.Plans {
		g.Fragment += plan.FragmentCount()
		dn := g.Decode.nodeOf(plan.DecodeTPRank)
		for _, t := range plan.Targets {
			if t.PrefillTPRank < 0 || t.PrefillTPRank >= P {
				return fmt.Errorf("topograph: decode TP rank %d targets prefill TP rank %d, outside 0..%d", plan.DecodeTPRank, t.PrefillTPRank, P-1)
			}
			k := edgeKey{from: g.Prefill.nodeOf(t.PrefillTPRank), to: dn, dummy: t.IsDummy}
			e, ok := edges[k]
			if !ok {
				e = &Edge{From: g.Prefill.Nodes[k.from].ID, To: g.Decode.Nodes[k.to].ID, Dummy: t.IsDummy, WholeItems: true, Read: g.RankMap}
				edges[k] = e
				order = append(order, k)
			}
			mv := TargetMovement(plan, t, set.Layout)
			e.Routes++
			e.BytesPerPage += mv.BytesPerPage
			e.Fragments += mv.Fragments
			e.WholeItems = e.WholeItems && (mv.WholeItems || t.IsDummy)
		}
		for _, r := range plan.IdlePrefillTPRanks {
			if r < 0 || r >= P {
				return fmt.Errorf("topograph: decode TP rank %d lists idle prefill TP rank %d, outside 0..%d", plan.DecodeTPRank, r, P-1)
			}
			n := g.Prefill.nodeOf(r)
			g.Prefill.Nodes[n].IdleRanks++
			if covered[n] == nil {
				covered[n] = map[int]bool{}
			}
			covered[n][plan.DecodeTPRank] = true
		}
	}
	for n, ds := range covered {
		for d := range ds {
			g.Prefill.Nodes[n].CoveredBy = append(g.Prefill.Nodes[n].CoveredBy, d)
		}
		sort.Ints(g.Prefill.Nodes[n].CoveredBy)
	}
	// Real edges first, then by prefill node and decode node: a stable
	// drawing order, dummies on top of nothing they could hide.
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.dummy != b.dummy {
			return !a.dummy
		}
		if a.from != b.from {
			return a.from < b.from
		}
		return a.to < b.to
	})
	for _, k := range order {
		g.Edges = append(g.Edges, *edges[k])
	}
	return nil
}

func (g *Graph) addNotes() {
	if g.RankMap {
		g.Notes = append(g.Notes, "The engine's own connector moves the bytes and sizes them; pdtopo publishes no plans, so edges show which prefill ranks each decode rank reads.")
	}
	for _, s := range []Side{g.Prefill, g.Decode} {
		if s.Aggregated() {
			g.Notes = append(g.Notes, fmt.Sprintf("Aggregated: %d %s TP ranks per DP group are more than %d, so each %s node stands for %d consecutive ranks and its edges sum theirs.",
				s.TPPerDP, s.Role, MaxRanksPerSide, s.Role, s.PerNode))
		}
	}
	switch {
	case g.Decode.AllGroups:
		g.Notes = append(g.Notes, fmt.Sprintf("Decode ranks are the engine's global ranks (%d DP-attention groups of %d); prefill ranks are attention-TP ranks inside the prefill DP group serving the request (prefill DP %d).",
			g.Decode.DPSize, g.Layout.Decode.TPPerDP(), g.Prefill.DPSize))
	case g.Prefill.DPSize > 1 || g.Decode.DPSize > 1:
		g.Notes = append(g.Notes, fmt.Sprintf("One DP group per side is drawn (prefill DP %d, decode DP %d): every prefill DP group sends to the decode DP group serving a request by the same plans.",
			g.Prefill.DPSize, g.Decode.DPSize))
	}
}

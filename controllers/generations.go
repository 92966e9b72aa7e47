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

package controllers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// Generations: a layout change is a rollout, old and new instances serving
// side by side for minutes. status.generations lists the layout pairs
// served: the current spec's, and older ones while anything still uses
// them (decode pods admitted under the old decode layout, their agents,
// prefill instances of the old prefill layout the agents hold). The
// publisher keeps the sets it published for the generations (servesSet,
// plansets.go) and plans the cross pairs ServedLayoutPairs lists that are
// no generation's own (crossplans.go).

// GenerationGrace is how long an older generation nothing is seen using is
// kept: prefill instances are only known once an agent met them in a room,
// so a quiet minute is not proof that none remain.
const GenerationGrace = 5 * time.Minute

// LayoutPair is one (prefill layout, decode layout) pair to publish plans
// for.
type LayoutPair struct {
	Prefill, Decode pdv1.FleetLayout
}

// Spec is base with both roles' layouts replaced by the pair's: the spec
// the pair's plans are made from (every other field is the current
// spec's).
func (lp LayoutPair) Spec(base pdv1.PDPairSpec) pdv1.PDPairSpec {
	s := *base.DeepCopy()
	s.Prefill, s.Decode = *lp.Prefill.DeepCopy(), *lp.Decode.DeepCopy()
	return s
}

func (lp LayoutPair) String() string {
	return fmt.Sprintf("prefill %s × decode %s", describeKey(decodeKey(lp.Prefill)), describeKey(decodeKey(lp.Decode)))
}

func (lp LayoutPair) equal(o LayoutPair) bool {
	return equality.Semantic.DeepEqual(lp.Prefill, o.Prefill) && equality.Semantic.DeepEqual(lp.Decode, o.Decode)
}

// currentPair is the spec's layout pair.
func currentPair(pair *pdv1.PDPair) LayoutPair {
	return LayoutPair{Prefill: pair.Spec.Prefill, Decode: pair.Spec.Decode}
}

// ServedLayoutPairs are the layout pairs to publish plans for, from
// status.generations: each generation's own pair, then the cross pairs of
// every older generation with the current one (old prefill × new decode,
// new prefill × old decode), the current generation's pair first, each
// once. A pair the engine refuses is listed all the same: planning it
// refuses it, and RolloutCompatible names it. Without generations (a pair
// not reconciled since they were added) it is the spec's pair alone.
func ServedLayoutPairs(pair *pdv1.PDPair) []LayoutPair {
	gens := pair.Status.Generations
	if len(gens) == 0 {
		return []LayoutPair{currentPair(pair)}
	}
	var out []LayoutPair
	add := func(lp LayoutPair) {
		if !slices.ContainsFunc(out, lp.equal) {
			out = append(out, lp)
		}
	}
	for _, g := range gens {
		if g.Current {
			add(LayoutPair{g.Prefill, g.Decode})
		}
	}
	for _, g := range gens {
		add(LayoutPair{g.Prefill, g.Decode})
	}
	if i := slices.IndexFunc(gens, func(g pdv1.PlanGeneration) bool { return g.Current }); i >= 0 {
		for _, lp := range crossPairs(LayoutPair{gens[i].Prefill, gens[i].Decode}, gens) {
			add(lp)
		}
	}
	return out
}

// crossPairs are the pairs of instances of different generations that
// meet mid-rollout: an older generation's prefill with the current decode,
// the current prefill with an older decode (where the layouts differ).
func crossPairs(c LayoutPair, gens []pdv1.PlanGeneration) []LayoutPair {
	var out []LayoutPair
	for _, g := range gens {
		if (LayoutPair{g.Prefill, g.Decode}).equal(c) {
			continue
		}
		add := func(lp LayoutPair) { // two older generations may share a role's layout
			if !slices.ContainsFunc(out, lp.equal) {
				out = append(out, lp)
			}
		}
		if !equality.Semantic.DeepEqual(g.Prefill, c.Prefill) {
			add(LayoutPair{g.Prefill, c.Decode})
		}
		if !equality.Semantic.DeepEqual(g.Decode, c.Decode) {
			add(LayoutPair{c.Prefill, g.Decode})
		}
	}
	return out
}

// servedPlanHashes maps the plan hash of every older generation of another
// decode layout than the spec's, and of every cross pair published for
// one (an agent reports the first set of its decode layout, which may be
// a cross pair's), to that decode layout's text.
func servedPlanHashes(pair *pdv1.PDPair, crosses []crossPlan) map[string]string {
	out := map[string]string{}
	for _, g := range pair.Status.Generations {
		if g.Current || g.PlanHash == "" || equality.Semantic.DeepEqual(g.Decode, pair.Spec.Decode) {
			continue
		}
		out[g.PlanHash] = parallelismOf(g.Decode).String()
	}
	for _, c := range crosses {
		if c.published() && !equality.Semantic.DeepEqual(c.pair.Decode, pair.Spec.Decode) {
			out[c.out.hash] = parallelismOf(c.pair.Decode).String()
		}
	}
	return out
}

// onServedGeneration: the agent runs the plan of an older generation whose
// decode layout is the one it was admitted under.
func (obs *fleetObservation) onServedGeneration(info agentInfo) bool {
	layout, ok := obs.servedHashes[info.PlanHash]
	return ok && info.DecodeLayout == layout
}

// generationsInput is what one reconcile knows for status.generations.
type generationsInput struct {
	// servable: the spec's layout pair has a compatible verdict (a contract
	// pair still waiting for its contracts does not yet).
	servable bool
	// refusal says why the spec's pair is not servable ("" when it is).
	refusal string
	// planHash is the spec's plan hash ("" when none is published).
	planHash string
	// usage is nil when the decode pods could not be listed: older
	// generations then keep their counts and are not dropped.
	usage *layoutUsage
	now   time.Time
	// generation is the pair's metadata.generation, for messages.
	generation int64
}

// nextGenerations is status.generations after one reconcile.
func nextGenerations(pair *pdv1.PDPair, in generationsInput) []pdv1.PlanGeneration {
	now := metav1.NewTime(in.now.Truncate(time.Second))
	cur := currentPair(pair)
	var out []pdv1.PlanGeneration
	if in.servable {
		g := pdv1.PlanGeneration{Prefill: cur.Prefill, Decode: cur.Decode, Current: true, SpecGeneration: pair.Generation, Since: now}
		if i := slices.IndexFunc(pair.Status.Generations, func(o pdv1.PlanGeneration) bool { return (LayoutPair{o.Prefill, o.Decode}).equal(cur) }); i >= 0 {
			old := pair.Status.Generations[i]
			g.SpecGeneration, g.Since, g.LastUsed = old.SpecGeneration, old.Since, old.LastUsed
		}
		g.PlanHash = in.planHash
		if g.LastUsed.IsZero() {
			// not moved while current: that would write the status every
			// lastUsedStep for every pair; it moves when the generation
			// stops being current
			g.LastUsed = now
		}
		countUsage(&g, in.usage)
		out = append(out, g)
	}
	for _, old := range pair.Status.Generations {
		lp := LayoutPair{old.Prefill, old.Decode}
		if in.servable && lp.equal(cur) {
			continue
		}
		g := *old.DeepCopy()
		if g.Current { // replaced just now: its grace starts now
			g.LastUsed = now
		}
		g.Current = false
		if keep := retain(&g, cur, in, now); keep {
			out = append(out, g)
		}
	}
	if len(out) > pdv1.MaxPlanGenerations {
		// the oldest in use go first: their instances are the fewest left
		slices.SortStableFunc(out[1:], func(a, b pdv1.PlanGeneration) int { return b.LastUsed.Compare(a.LastUsed.Time) })
		out = out[:pdv1.MaxPlanGenerations]
	}
	return out
}

// retain updates an older generation's counts and says whether it stays:
// while what differs from the spec's layouts is still in use, or within
// GenerationGrace of its last use, or while the spec is not servable (it
// is what keeps serving then).
func retain(g *pdv1.PlanGeneration, cur LayoutPair, in generationsInput, now metav1.Time) bool {
	if in.usage == nil {
		return true
	}
	countUsage(g, in.usage)
	uses := generationUses(g, cur)
	switch {
	case !in.servable:
		touch(g, now)
		g.Message = truncate("still served: the spec's generation "+fmt.Sprint(in.generation)+" is not servable ("+in.refusal+"), so this generation keeps serving until the spec is fixed", 1024)
		return true
	case len(uses) > 0:
		touch(g, now)
		g.Message = truncate("kept: "+strings.Join(uses, "; "), 1024)
		return true
	case now.Sub(g.LastUsed.Time) < GenerationGrace:
		g.Message = fmt.Sprintf("nothing seen using it since %s; dropped %s after that unless something does", g.LastUsed.UTC().Format(time.RFC3339), GenerationGrace)
		return true
	}
	return false
}

// generationUses says what keeps an older generation g in use. Only what
// usage can tell apart from the current generation's counts: decode pods
// and agents by usageKey, prefill instances by TP and DP; the current
// generation's own instances would otherwise keep g forever.
func generationUses(g *pdv1.PlanGeneration, cur LayoutPair) []string {
	var uses []string
	if k := decodeKey(g.Decode); k != decodeKey(cur.Decode) && g.DecodePods+g.Agents > 0 {
		uses = append(uses, fmt.Sprintf("%d decode pods and %d agents of decode layout %s remain", g.DecodePods, g.Agents, describeKey(k)))
	}
	if p := parallelismOf(g.Prefill); p != parallelismOf(cur.Prefill) && g.PrefillInstances > 0 {
		uses = append(uses, fmt.Sprintf("agents hold %d prefill instances of prefill layout %s", g.PrefillInstances, p))
	}
	return uses
}

// describeKey is a usageKey for a message: "tp=4,dp=1" or "tp=4,dp=1 on
// engine version 0.11.0".
func describeKey(k usageKey) string {
	if k.version == "" {
		return k.layout.String()
	}
	return k.layout.String() + " on engine version " + k.version
}

// countUsage writes the usage of g's layouts (left as they were when the
// pods could not be listed).
func countUsage(g *pdv1.PlanGeneration, u *layoutUsage) {
	if u == nil {
		return
	}
	d, p := decodeKey(g.Decode), parallelismOf(g.Prefill)
	g.DecodePods, g.Agents, g.PrefillInstances = u.decodePods[d], u.agents[d], u.prefill[p]
}

// lastUsedStep is how stale lastUsed may get: moving it on every reconcile
// would write the status every time an agent answers a probe.
const lastUsedStep = time.Minute

// touch records that g is in use now, to lastUsedStep.
func touch(g *pdv1.PlanGeneration, now metav1.Time) {
	if g.LastUsed.IsZero() || now.Sub(g.LastUsed.Time) >= lastUsedStep {
		g.LastUsed = now
	}
}

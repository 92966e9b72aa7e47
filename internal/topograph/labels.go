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
	"strconv"
	"strings"
)

// Human is a byte count for labels: "512 B", "40 KiB", "68.6 KiB", "1.5 MiB".
func Human(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	if u == 0 || v == float64(int64(v)) {
		return fmt.Sprintf("%d %s", int64(v), units[u])
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + units[u]
}

// EdgeLabel is the text on an edge: the bytes it moves per page. Dummies
// carry no text (their dashes say it).
func (e Edge) EdgeLabel() string {
	if e.Dummy {
		return ""
	}
	if e.Read {
		if e.Routes > 1 {
			return fmt.Sprintf("%d routes · read", e.Routes)
		}
		return "read"
	}
	s := Human(e.BytesPerPage) + "/page"
	if e.Routes > 1 {
		s = fmt.Sprintf("%d routes · %s", e.Routes, s)
	}
	if e.WholeItems {
		s += " (whole items)"
	}
	return s
}

// Detail is an edge's full description (a tooltip in the SVG).
func (e Edge) Detail() string {
	switch {
	case e.Dummy && e.Read:
		return fmt.Sprintf("%s → %s: notified only (%d route(s)): the engine sends the request's transfer info, no bytes", e.From, e.To, e.Routes)
	case e.Dummy:
		return fmt.Sprintf("%s → %s: dummy (%d route(s)): registration and empty requests so the prefill rank completes the room; no bytes, no status", e.From, e.To, e.Routes)
	case e.Read:
		return fmt.Sprintf("%s → %s: the decode rank reads this prefill rank's KV cache through the engine's connector (%d route(s))", e.From, e.To, e.Routes)
	}
	what := fmt.Sprintf("%d fragment(s)", e.Fragments)
	if e.WholeItems {
		what = "whole items of every buffer"
	}
	return fmt.Sprintf("%s → %s: %d bytes per page (%s), %d route(s)", e.From, e.To, e.BytesPerPage, what, e.Routes)
}

// IdleLabel marks an idle prefill node with the decode ranks that cover it.
func (n Node) IdleLabel() string {
	if n.IdleRanks == 0 {
		return ""
	}
	who := "decode " + joinInts(n.CoveredBy)
	if n.Ranks() > 1 {
		return fmt.Sprintf("%d idle: dummies from %s", n.IdleRanks, who)
	}
	return "idle: dummies from " + who
}

// BoxLabel titles a side's DP group box.
func (s Side) BoxLabel() string {
	if s.AllGroups {
		return fmt.Sprintf("%s · all %d DP groups · ranks 0–%d", s.Role, s.DPSize, s.TPSize-1)
	}
	return fmt.Sprintf("%s · DP group 0 of %d · TP 0–%d", s.Role, s.DPSize, s.TPPerDP-1)
}

// OtherGroupsLabel describes the DP groups not drawn, or is empty.
func (s Side) OtherGroupsLabel() string {
	if s.DPSize <= 1 || s.AllGroups {
		return ""
	}
	if s.DPSize == 2 {
		return fmt.Sprintf("%s DP group 1: same plans (engine ranks %d–%d)", s.Role, s.TPPerDP, s.TPSize-1)
	}
	return fmt.Sprintf("%s DP groups 1–%d: same plans (engine ranks %d–%d)", s.Role, s.DPSize-1, s.TPPerDP, s.TPSize-1)
}

// Title is the picture's headline.
func (g *Graph) Title() string {
	return fmt.Sprintf("PDPair %s: prefill TP %d DP %d → decode TP %d DP %d", g.Name,
		g.Prefill.TPSize, g.Prefill.DPSize, g.Decode.TPSize, g.Decode.DPSize)
}

// Subtitle summarises the plans.
func (g *Graph) Subtitle() string {
	if g.RankMap {
		return fmt.Sprintf("rank map of the engine, %d token(s)/page, no plans published", g.Layout.TokensPerPage)
	}
	return fmt.Sprintf("plan %s, %s, %d KV + %d state buffers, %d token(s)/page, %d fragment(s)", g.Kind, g.Layout.AttentionBackend,
		len(g.Layout.KVBufferKinds), len(g.Layout.DecodeStateItemLens), g.Layout.TokensPerPage, g.Fragment)
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ", ")
}

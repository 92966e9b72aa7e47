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

package v1

import "github.com/pdtopo/pdtopo/pkg/transferplan"

// interval is the half-open unit range [start, end) a rank holds of a sharded
// buffer. Ranks that are not the first of their replica group hold none (the
// first one speaks for the group).
func (l BufferLayout) interval(rank, tp int) (start, end int64, ok bool) {
	if rank%l.ReplicaGroup != 0 {
		return 0, 0, false
	}
	n := l.shardLen(tp)
	k := int64(rank / l.ReplicaGroup)
	return k * n, (k + 1) * n, true
}

// eachFragment calls emit with each of decode TP rank d's fragments in walk
// order: for a replicated buffer one whole-item fragment from prefill rank
// d*P/D; for a sharded buffer, per prefill shard that intersects d's range,
// one fragment per token row of the page (pages are token-major, so a head
// range is one contiguous run per row), or a single fragment when the slice
// spans whole rows on both sides and the rows are therefore contiguous.
func (p *Planner) eachFragment(d int, emit func(f *transferplan.TransferFragment)) {
	P, D := p.prefillTP, p.decodeTP
	var f transferplan.TransferFragment
	for i := range p.pairs {
		bp := &p.pairs[i]
		pre, dec := &bp.prefill, &bp.decode
		f = transferplan.TransferFragment{BufferIndex: pre.Index, BufferKind: pre.Kind, DstRank: d,
			SrcPageStrideBytes: pre.ItemStrideBytes, DstPageStrideBytes: dec.ItemStrideBytes}
		if pre.Axis == AxisReplicated {
			f.SrcRank, f.BytesPerPage = d*P/D, dec.ItemStrideBytes
			emit(&f)
			continue
		}
		s, e, ok := dec.interval(d, D)
		if !ok {
			continue
		}
		// Work in units of one token row: rows is 1 when slices are whole rows.
		rows, u := bp.rows, pre.UnitBytes
		s, e = s/rows, e/rows
		shard := pre.shardLen(P) / rows
		preRow, decRow := pre.ItemStrideBytes/rows, dec.ItemStrideBytes/rows
		for k := s / shard; k*shard < e; k++ {
			ps := k * shard
			from, to := max(s, ps), min(e, ps+shard)
			f.SrcRank = int(k) * pre.ReplicaGroup
			f.BytesPerPage = (to - from) * u
			for t := range rows {
				f.SrcByteOffset = t*preRow + (from-ps)*u
				f.DstByteOffset = t*decRow + (from-s)*u
				emit(&f)
			}
		}
	}
}

// fragmentsBySource returns decode rank d's fragments grouped by source
// prefill rank, ascending, walk order kept within a rank. It makes two passes
// (count, then place) so that each fragment is written once, into one slice.
func (p *Planner) fragmentsBySource(d int) [][]transferplan.TransferFragment {
	start := make([]int, p.prefillTP+1)
	p.eachFragment(d, func(f *transferplan.TransferFragment) { start[f.SrcRank+1]++ })
	for r := 1; r <= p.prefillTP; r++ {
		start[r] += start[r-1]
	}
	all := make([]transferplan.TransferFragment, start[p.prefillTP])
	next := append([]int(nil), start[:p.prefillTP]...)
	p.eachFragment(d, func(f *transferplan.TransferFragment) {
		all[next[f.SrcRank]] = *f
		next[f.SrcRank]++
	})
	var groups [][]transferplan.TransferFragment
	for r := 0; r < p.prefillTP; r++ {
		if a, b := start[r], start[r+1]; b > a {
			groups = append(groups, all[a:b:b])
		}
	}
	return groups
}

// eachSource calls visit with every (buffer, prefill TP rank) pair from which
// decode TP rank d gets bytes, in walk order, without building fragments.
func (p *Planner) eachSource(d int, visit func(bp *bufferPair, r int)) {
	P, D := p.prefillTP, p.decodeTP
	for i := range p.pairs {
		bp := &p.pairs[i]
		pre, dec := &bp.prefill, &bp.decode
		if pre.Axis == AxisReplicated {
			visit(bp, d*P/D)
			continue
		}
		s, e, ok := dec.interval(d, D)
		if !ok {
			continue
		}
		shard := pre.shardLen(P)
		for k := s / shard; k*shard < e; k++ {
			visit(bp, int(k)*pre.ReplicaGroup)
		}
	}
}

// shardedFanOut counts, for each prefill TP rank, the decode TP ranks whose
// fragments name it — once per layout, not once per decode rank.
func (p *Planner) shardedFanOut() []int {
	fan := make([]int, p.prefillTP)
	lastSeen := make([]int, p.prefillTP)
	for r := range lastSeen {
		lastSeen[r] = -1
	}
	for d := 0; d < p.decodeTP; d++ {
		p.eachSource(d, func(_ *bufferPair, r int) {
			if lastSeen[r] != d {
				lastSeen[r] = d
				fan[r]++
			}
		})
	}
	return fan
}

// assignRows decides, per sharded buffer, how many token rows its fragments
// are cut into. Pages are token-major (token, head, head-dim): a rank's item
// is tokensPerPage rows of its heads. When prefill and decode ranks hold the
// same number of heads, every slice is a whole row on both sides, and the
// rows of a page are contiguous: one fragment per page (rows 1). Otherwise a
// slice is a head range of each row: one fragment per row (rows
// tokensPerPage), which needs items that are whole rows of whole units.
// State buffers are not paged by token.
func (p *Planner) assignRows() error {
	T := int64(p.layout.TokensPerPage)
	for i := range p.pairs {
		bp := &p.pairs[i]
		bp.rows = 1
		if T == 1 || !bp.spec.Kind.IsKV() || bp.prefill.Axis == AxisReplicated {
			continue
		}
		preLen, decLen := bp.prefill.shardLen(p.prefillTP), bp.decode.shardLen(p.decodeTP)
		if preLen == decLen {
			continue
		}
		if preLen%T != 0 || decLen%T != 0 {
			return bufferErrorf(transferplan.ReasonItemNotTokenAligned, bp.spec, bp.prefill.Index,
				"pages hold %d tokens (token-major), so a decode rank takes a head range of every token row; "+
					"that needs items of %d whole rows of %d-byte units, but the prefill item holds %d units and the decode item %d",
				T, T, bp.prefill.UnitBytes, preLen, decLen)
		}
		bp.rows = T
	}
	return nil
}

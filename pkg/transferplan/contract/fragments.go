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

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// interval is a half-open range of units of a partition axis.
type interval struct{ start, end int64 }

// partSpan is one global part of a sharded field as a role holds it: the
// part starts at offset of the global axis, each of the role's distinct
// shards holds local units of it, stored from localOffset of the rank's
// axis.
type partSpan struct{ offset, local, localOffset int64 }

// spans lays out the parts for a role whose rank holds localExtent units.
func (s *contractSegment) spans(localExtent int64) []partSpan {
	distinct := s.globalExtent / localExtent
	out := make([]partSpan, len(s.parts))
	var global, local int64
	for i, part := range s.parts {
		out[i] = partSpan{offset: global, local: part / distinct, localOffset: local}
		global += part
		local += part / distinct
	}
	return out
}

// decodeShard is the shard decode rank d holds (ranks in a replica group
// hold the same one).
func (p *Planner) decodeShard(s *contractSegment, d int) int64 {
	distinct := s.distinctShards(s.decodeShape)
	return int64(d) / (int64(p.D) / distinct)
}

// sourcesOf calls add for every prefill rank whose shard of part i of the
// segment meets decode rank d's, ascending, with both intervals and their
// intersection. Only the first rank of each prefill replica group sends.
func (p *Planner) sourcesOf(s *contractSegment, d int, add func(rank int, part int, pre, dec, inter interval)) {
	decodeSpans := s.spans(s.decodeShape[s.axis])
	prefillSpans := s.spans(s.prefillShape[s.axis])
	distinctP := s.distinctShards(s.prefillShape)
	replicaP := int64(p.P) / distinctP
	shard := p.decodeShard(s, d)
	for i := range s.parts {
		ds, ps := decodeSpans[i], prefillSpans[i]
		if ds.local == 0 || ps.local == 0 {
			continue
		}
		dec := interval{ds.offset + shard*ds.local, ds.offset + (shard+1)*ds.local}
		first := max((dec.start-ps.offset)/ps.local, 0)
		last := min((dec.end-1-ps.offset)/ps.local, distinctP-1)
		for k := first; k <= last; k++ {
			pre := interval{ps.offset + k*ps.local, ps.offset + (k+1)*ps.local}
			inter := interval{max(pre.start, dec.start), min(pre.end, dec.end)}
			if inter.start < inter.end {
				add(int(k*replicaP), i, pre, dec, inter)
			}
		}
	}
}

// fragmentsBySource is _fragments_for_decode_rank: per source prefill rank,
// its fragments in field order (and part order within a field).
func (p *Planner) fragmentsBySource(d int) map[int][]transferplan.ContractFragment {
	out := map[int][]transferplan.ContractFragment{}
	for i := range p.segments {
		s := &p.segments[i]
		if !s.partitioned {
			r := d * p.P / p.D
			out[r] = append(out[r], transferplan.ContractFragment{
				GroupID: s.groupID, FieldID: s.fieldID,
				SrcRowStrideBytes: s.prefillPayload(), DstRowStrideBytes: s.decodePayload(),
				BytesPerRow: s.prefillPayload(), RowsPerPage: 1,
			})
			continue
		}
		decodeSpans, prefillSpans := s.spans(s.decodeShape[s.axis]), s.spans(s.prefillShape[s.axis])
		inner := s.innerBytes()
		p.sourcesOf(s, d, func(rank, part int, pre, dec, inter interval) {
			f := transferplan.ContractFragment{
				GroupID: s.groupID, FieldID: s.fieldID,
				SrcByteOffset:     (prefillSpans[part].localOffset + inter.start - pre.start) * inner,
				DstByteOffset:     (decodeSpans[part].localOffset + inter.start - dec.start) * inner,
				SrcRowStrideBytes: s.prefillShape[s.axis] * inner,
				DstRowStrideBytes: s.decodeShape[s.axis] * inner,
				BytesPerRow:       (inter.end - inter.start) * inner,
				RowsPerPage:       s.rowsPerPage(),
			}
			// Rows that are whole on both sides are one contiguous block.
			if f.RowsPerPage > 1 && f.SrcRowStrideBytes == f.BytesPerRow && f.DstRowStrideBytes == f.BytesPerRow {
				f.BytesPerRow *= f.RowsPerPage
				f.SrcRowStrideBytes, f.DstRowStrideBytes, f.RowsPerPage = f.BytesPerRow, f.BytesPerRow, 1
			}
			out[rank] = append(out[rank], f)
		})
	}
	return out
}

// contractSourceKey of a segment is a key shared by segments that have the same
// sources for every decode rank: unsharded, or sharded with the same local
// extents and parts.
func contractSourceKey(s *contractSegment) string {
	if !s.partitioned {
		return "replicated"
	}
	return fmt.Sprint(s.prefillShape[s.axis], s.decodeShape[s.axis], s.globalExtent, s.parts)
}

// computeFanOut is decode_ranks_by_prefill_rank reduced to counts: for
// every decode rank, the distinct prefill ranks it pulls from. Segments of
// one source class are walked once, so the cost grows with the sources,
// not with the fields.
func (p *Planner) computeFanOut() []int {
	fan := make([]int, p.P)
	if p.P == p.D {
		for r := range fan {
			fan[r] = 1
		}
		return fan
	}
	var reps []*contractSegment
	seen := map[string]bool{}
	for i := range p.segments {
		s := &p.segments[i]
		if c := contractSourceKey(s); !seen[c] {
			seen[c] = true
			reps = append(reps, s)
		}
	}
	stamp := make([]int, p.P)
	for r := range stamp {
		stamp[r] = -1
	}
	mark := func(r, d int) {
		if stamp[r] != d {
			stamp[r] = d
			fan[r]++
		}
	}
	for d := range p.D {
		for _, s := range reps {
			if !s.partitioned {
				mark(d*p.P/p.D, d)
				continue
			}
			p.sourcesOf(s, d, func(rank, _ int, _, _, _ interval) { mark(rank, d) })
		}
	}
	return fan
}

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

import "github.com/pdtopo/pdtopo/pkg/pyjson"

// The engine re-encodes a contract with json.dumps(dataclasses.asdict(c),
// separators=(",", ":")): dataclass fields in declaration order, tuples as
// lists, non-ASCII escaped as \uXXXX (lowercase hex), floats as Python's
// repr. A prefill's bootstrap server serves that form and a decode
// registers it, so pdtopo hashes and compares contracts in it.

func (c *CacheContract) encodeCanonical() []byte {
	w := &pyjson.CompactWriter{}
	w.Raw(`{"plan":{"prefix_granularity":`)
	w.Value(c.prefixGranularity)
	w.Raw(`,"lcm_block_bytes":`)
	w.Value(c.lcmBlockBytes)
	w.Raw(`,"num_lcm_blocks":`)
	w.Value(c.numLCMBlocks)
	w.Raw(`,"groups":[`)
	for i, g := range c.groups {
		w.Sep(i)
		w.Object("group_id", g.groupID, "cache_blocks_per_lcm_block", g.cacheBlocksPerLCMBlock, "page_count", g.pageCount)
	}
	w.Raw(`],"planes":[`)
	for i, p := range c.planes {
		w.Sep(i)
		w.Object("plane_id", p.planeID, "bytes_per_lcm_block", p.bytesPerLCMBlock, "arena_offset_bytes", p.arenaOffsetBytes)
	}
	w.Raw(`],"fields":[`)
	for i, f := range c.fields {
		w.Sep(i)
		w.Object("group_id", f.groupID, "field_id", f.fieldID, "plane_id", f.planeID, "shape", pyjson.NewList(f.shape),
			"dtype", pyjson.String(f.dtype), "field_offset_bytes", f.fieldOffsetBytes, "page_stride_bytes", f.pageStrideBytes)
	}
	w.Raw(`]},"group_specs":[`)
	for i, s := range c.groupSpecs {
		w.Sep(i)
		w.Object("group_id", s.groupID, "retention", s.retention, "rows_per_page", s.rowsPerPage, "entry_stride_tokens", s.entryStrideTokens,
			"sliding_window_tokens", s.slidingWindowTokens, "family", s.family, "transfer_policy", s.transferPolicy,
			"checkpoint_granularity", s.checkpointGranularity)
	}
	w.Raw(`],"transfer_schema":{"fields":[`)
	for i, tf := range c.transferFields {
		w.Sep(i)
		w.Raw(`{"field_id":`)
		w.Value(tf.fieldID)
		w.Raw(`,"partition":`)
		p := tf.partition
		w.Object("axis", p.axisValue, "global_extent", p.globalExtent, "global_parts", pyjson.NewList(p.globalParts))
		w.Raw(`}`)
	}
	w.Raw(`]}}`)
	return w.Bytes()
}

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
	"encoding/hex"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// maxDecodeTPSize bounds the rank count an index may claim, so that a hostile
// index cannot make a loader allocate for billions of ranks.
const maxDecodeTPSize = 1 << 16

// check verifies that an index read from untrusted bytes is one this package
// could have written: known version, sane layout, and shards that cover ranks
// 0..DecodeTPSize-1 once each, in order, under the keys RankKey gives.
func (idx *Index) check() error { return idx.checkKeys(RankKey) }

// checkKeys is check with the rank keys of one set of a publication
// (SetRankKey): the current set's are RankKey's.
func (idx *Index) checkKeys(keyOf func(rank int) string) error {
	if idx.FormatVersion != 1 && idx.FormatVersion != FormatVersion {
		return formatErrorf(ReasonUnsupportedVersion, "%s has formatVersion %d; this agent reads 1 and %d", IndexKey, idx.FormatVersion, FormatVersion)
	}
	if want := formatVersionOf(idx.Layout); idx.FormatVersion != want {
		return malformed("formatVersion is %d but plans of the %s wire are published as version %d", idx.FormatVersion, wireName(idx.Layout.Wire), want)
	}
	if idx.DecodeTPSize < 1 || idx.DecodeTPSize > maxDecodeTPSize {
		return malformed("decodeTPSize is %d; it must be in 1..%d", idx.DecodeTPSize, maxDecodeTPSize)
	}
	if err := idx.Layout.Prefill.Validate("layout.prefill"); err != nil {
		return malformed("%v", err)
	}
	if err := idx.Layout.Decode.Validate("layout.decode"); err != nil {
		return malformed("%v", err)
	}
	if d := idx.Layout.Decode.TPPerDP(); d != idx.DecodeTPSize {
		return malformed("decodeTPSize is %d but the layout's decode TP per DP group is %d", idx.DecodeTPSize, d)
	}
	next := 0
	for s, shard := range idx.Shards {
		if err := shard.check(s, next, keyOf); err != nil {
			return err
		}
		next = shard.LastRank + 1
	}
	if next != idx.DecodeTPSize {
		return malformed("the shards cover decode TP ranks 0..%d, not 0..%d", next-1, idx.DecodeTPSize-1)
	}
	return nil
}

// check verifies shard s, whose first rank must be first and whose keys
// are keyOf's.
func (sh Shard) check(s, first int, keyOf func(rank int) string) error {
	if sh.ConfigMap == "" || len(sh.Ranks) == 0 {
		return malformed("shard %d has no ConfigMap name or no ranks", s)
	}
	if sh.FirstRank != first || sh.LastRank != first+len(sh.Ranks)-1 {
		return malformed("shard %d (%s) claims ranks %d..%d, expected %d..%d", s, sh.ConfigMap, sh.FirstRank, sh.LastRank, first, first+len(sh.Ranks)-1)
	}
	for i, e := range sh.Ranks {
		if e.Rank != first+i || e.Key != keyOf(e.Rank) {
			return malformed("shard %d (%s) entry %d is rank %d under key %q, expected rank %d under %q", s, sh.ConfigMap, i, e.Rank, e.Key, first+i, keyOf(first+i))
		}
		if e.Size < 1 || e.Size > MaxRankPlanBytes {
			return malformed("rank %d records size %d; it must be in 1..%d", e.Rank, e.Size, MaxRankPlanBytes)
		}
		if b, err := hex.DecodeString(e.SHA256); err != nil || len(b) != 32 {
			return malformed("rank %d records sha256 %q, not 64 hex digits", e.Rank, e.SHA256)
		}
	}
	return nil
}

func malformed(format string, args ...any) *FormatError {
	return formatErrorf(ReasonMalformedIndex, IndexKey+": "+format, args...)
}

// find returns the shard and entry of a rank.
func (idx *Index) find(rank int) (Shard, RankEntry, bool) {
	for _, sh := range idx.Shards {
		if rank >= sh.FirstRank && rank <= sh.LastRank {
			return sh, sh.Ranks[rank-sh.FirstRank], true
		}
	}
	return Shard{}, RankEntry{}, false
}

func wireName(w transferplan.Wire) string { return string(w.OrV1()) }

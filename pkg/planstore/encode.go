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
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// maxObjectNameLen is the longest name a ConfigMap may have (DNS subdomain).
const maxObjectNameLen = 253

// Encode turns a plan set into the index object followed by the shard
// objects, in that order. The output is deterministic: the same name and set
// give byte-identical objects, so a publisher can compare before it writes.
func Encode(name string, set *transferplan.PlanSet) ([]Object, error) {
	if set == nil {
		return nil, formatErrorf(ReasonMalformedIndex, "no plan set to publish for %q", name)
	}
	next := func(rank int) (transferplan.RoutePlan, error) {
		if set.Plans[rank].DecodeTPRank != rank {
			return transferplan.RoutePlan{}, formatErrorf(ReasonMalformedIndex, "plan %d of the set is for decode TP rank %d; plans must be in rank order", rank, set.Plans[rank].DecodeTPRank)
		}
		return set.Plans[rank], nil
	}
	return encodeStream(name, set.Compatible, set.Layout, len(set.Plans), next)
}

// EncodePlanner plans and encodes one decode rank at a time, so that the
// whole plan set never exists in memory: what is held at once is one rank's
// plan and JSON and the compressed shards so far, which the shard limit
// bounds. each, if not nil, sees every rank's plan as it passes (to
// summarise the set). The objects are byte-identical to Encode's for the
// planner's plan set, whichever wire it plans.
func EncodePlanner(name string, p transferplan.Planner, each func(*transferplan.RoutePlan)) ([]Object, error) {
	next := func(rank int) (transferplan.RoutePlan, error) {
		plan, err := p.RoutePlan(rank)
		if err == nil && each != nil {
			each(&plan)
		}
		return plan, err
	}
	return encodeStream(name, true, p.Record(), p.DecodeTPSize(), next)
}

// encodeStream encodes ranks 0..ranks-1 as next produces them, hashing,
// compressing and packing each before asking for the next.
func encodeStream(name string, compatible bool, layout transferplan.LayoutRecord, ranks int,
	next func(rank int) (transferplan.RoutePlan, error)) ([]Object, error) {
	if err := checkName(name, ranks); err != nil {
		return nil, err
	}
	hasher, err := newSetHasher(compatible, layout)
	if err != nil {
		return nil, err
	}
	packer := &shardPacker{name: name}
	for rank := range ranks {
		plan, err := next(rank)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(&plan)
		if err != nil {
			return nil, fmt.Errorf("planstore: encoding the plan of decode TP rank %d: %w", rank, err)
		}
		hasher.addRank(raw)
		sum := sha256.Sum256(raw)
		entry := RankEntry{Rank: rank, Key: RankKey(rank), Size: int64(len(raw)), SHA256: hex.EncodeToString(sum[:])}
		if err := packer.add(entry, gzipBytes(raw)); err != nil {
			return nil, err
		}
	}
	index, err := encodeIndex(name, compatible, layout, ranks, hasher.sum(), packer.shards)
	if err != nil {
		return nil, err
	}
	return append([]Object{index}, packer.objects...), nil
}

// checkName rejects names whose last shard would not be a valid object name.
// Shard count is at most one per rank, which bounds the suffix.
func checkName(name string, ranks int) error {
	if name == "" {
		return formatErrorf(ReasonInvalidName, "the PDPair name is empty")
	}
	if longest := ShardConfigMapName(name, max(min(ranks, MaxShardConfigMaps)-1, 0)); len(longest) > maxObjectNameLen {
		return formatErrorf(ReasonInvalidName, "PDPair name %q (%d characters) makes ConfigMap names like %q longer than %d characters",
			name, len(name), longest, maxObjectNameLen)
	}
	return nil
}

// gzipWriters reuses compressors: a flate writer allocates about 1 MiB, and a
// 1024-rank layout would otherwise allocate one per rank.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// gzipBytes compresses with a zero header (no name, no time): deterministic.
func gzipBytes(raw []byte) []byte {
	var buf bytes.Buffer
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(&buf)
	_, _ = zw.Write(raw) // writes to a bytes.Buffer do not fail
	_ = zw.Close()
	return buf.Bytes()
}

// shardPacker fills shards in rank order, closing one before it would pass
// the budget, so every shard holds a contiguous rank range. It refuses the
// rank that would open shard MaxShardConfigMaps+1: decode pods project only
// that many, and stopping there bounds what an encoding holds in memory.
type shardPacker struct {
	name    string
	shards  []Shard
	objects []Object
}

func (k *shardPacker) add(entry RankEntry, gz []byte) error {
	single := Object{Name: ShardConfigMapName(k.name, len(k.shards)), BinaryData: map[string][]byte{entry.Key: gz}}
	if size := EstimatedSize(single); size > ShardBudgetBytes {
		return formatErrorf(ReasonRankTooLarge,
			"the plan of decode TP rank %d is %d bytes (%d gzipped, about %d in a ConfigMap); one ConfigMap holds at most %d",
			entry.Rank, entry.Size, len(gz), size, ShardBudgetBytes)
	}
	n := len(k.objects) - 1
	if n < 0 || EstimatedSize(k.objects[n])+entrySize(entry.Key, base64Len(len(gz))) > ShardBudgetBytes {
		if len(k.objects) == MaxShardConfigMaps {
			return formatErrorf(ReasonPlanTooLarge,
				"the compressed plans of decode TP ranks 0..%d already fill %d shard ConfigMaps of about %d bytes, the most a pair may have; "+
					"decode TP rank %d would need another", entry.Rank-1, MaxShardConfigMaps, ShardBudgetBytes, entry.Rank)
		}
		k.objects = append(k.objects, Object{Name: ShardConfigMapName(k.name, len(k.objects)), BinaryData: map[string][]byte{}})
		k.shards = append(k.shards, Shard{ConfigMap: ShardConfigMapName(k.name, len(k.shards)), FirstRank: entry.Rank})
		n++
	}
	k.objects[n].BinaryData[entry.Key] = gz
	k.shards[n].LastRank = entry.Rank
	k.shards[n].Ranks = append(k.shards[n].Ranks, entry)
	return nil
}

func encodeIndex(name string, compatible bool, layout transferplan.LayoutRecord, ranks int, planHash string, shards []Shard) (Object, error) {
	idx := Index{
		FormatVersion: formatVersionOf(layout),
		PDPair:        name,
		PlanHash:      planHash,
		Compatible:    compatible,
		DecodeTPSize:  ranks,
		Layout:        layout,
		Shards:        shards,
	}
	if idx.Shards == nil {
		idx.Shards = []Shard{}
	}
	raw, err := json.Marshal(&idx)
	if err != nil {
		return Object{}, fmt.Errorf("planstore: encoding the index of %q: %w", name, err)
	}
	obj := Object{Name: IndexConfigMapName(name), Data: map[string]string{IndexKey: string(raw)}}
	if size := EstimatedSize(obj); size > ShardBudgetBytes {
		return Object{}, formatErrorf(ReasonIndexTooLarge, "the index of %q is about %d bytes for %d ranks in %d shards; one ConfigMap holds at most %d",
			name, size, ranks, len(shards), ShardBudgetBytes)
	}
	return obj, nil
}

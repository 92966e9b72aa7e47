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
	"encoding/json"
	"errors"
	"fmt"
)

// SetsPublication is what EncodeSets published and what it left out.
type SetsPublication struct {
	// Objects are the index object (index.json of the current set, and
	// plansets.json when more than one set is published) followed by the
	// shards, as Encode returns them.
	Objects []Object
	// Published are the plan hashes of the sets published, current first.
	Published []string
	// Shared are the plan hashes of sets left out because an earlier set
	// is for the same decode layout and prefills that answer alike: an
	// agent could not tell them apart, and the earlier one serves them.
	Shared []string
	// Dropped are the plan hashes of sets left out because they did not
	// fit: past MaxPlanSets, or the shard ConfigMaps or the index past
	// their budget. The latest sets are dropped first.
	Dropped []string
}

// encodedSet is one set's index and its ranks' compressed plans, in rank order.
type encodedSet struct {
	index Index
	gz    [][]byte
}

// EncodeSets publishes several plan sets as one publication. Each element
// of sets is one set's objects as Encode or EncodePlanner returned them
// (or SplitSets gave back), all for the PDPair name, the current set
// first. The current set is always published, and its index.json is
// byte-identical to Encode's for it alone, so older agents load it as
// before; with one set the objects are Encode's. The rest are sized before
// they are packed and left out, latest first, when they do not fit.
func EncodeSets(name string, sets [][]Object) (SetsPublication, error) {
	if len(sets) == 0 {
		return SetsPublication{}, formatErrorf(ReasonMalformedIndex, "no plan set to publish for %q", name)
	}
	var (
		pub  SetsPublication
		kept []encodedSet
		seen = map[string]bool{}
	)
	for i, objs := range sets {
		es, err := readEncodedSet(name, objs)
		if err != nil {
			return SetsPublication{}, fmt.Errorf("planstore: plan set %d of %q: %w", i, name, err)
		}
		key := AnswerKey(es.index.Layout)
		switch {
		case seen[key]:
			pub.Shared = append(pub.Shared, es.index.PlanHash)
		case len(kept) == MaxPlanSets:
			pub.Dropped = append(pub.Dropped, es.index.PlanHash)
		default:
			seen[key] = true
			kept = append(kept, es)
		}
	}
	for {
		objects, err := packSets(name, kept)
		var fe *FormatError
		if err == nil || len(kept) == 1 || !errors.As(err, &fe) || (fe.Reason != ReasonPlanTooLarge && fe.Reason != ReasonIndexTooLarge) {
			if err != nil {
				return SetsPublication{}, err
			}
			pub.Objects = objects
			for _, es := range kept {
				pub.Published = append(pub.Published, es.index.PlanHash)
			}
			return pub, nil
		}
		last := kept[len(kept)-1]
		pub.Dropped = append([]string{last.index.PlanHash}, pub.Dropped...)
		kept = kept[:len(kept)-1]
	}
}

// readEncodedSet takes one set's index and compressed ranks out of the
// objects Encode made for it. They are the encoder's own output, so only
// their shape is checked here.
func readEncodedSet(name string, objs []Object) (encodedSet, error) {
	if len(objs) == 0 {
		return encodedSet{}, formatErrorf(ReasonMissingIndex, "no objects")
	}
	idx, err := LoadIndex(objs[:1])
	if err != nil {
		return encodedSet{}, err
	}
	if idx.PDPair != name {
		return encodedSet{}, formatErrorf(ReasonMalformedIndex, "the set is published for %q", idx.PDPair)
	}
	src := newObjectSource(objs)
	es := encodedSet{index: *idx, gz: make([][]byte, 0, idx.DecodeTPSize)}
	for _, sh := range idx.Shards {
		for _, e := range sh.Ranks {
			gz, err := src.read(sh.ConfigMap, e.Key, ObjectSizeLimit)
			if err != nil {
				return encodedSet{}, formatErrorf(ReasonMissingShard, "key %s of ConfigMap %s (decode TP rank %d): %v", e.Key, sh.ConfigMap, e.Rank, err)
			}
			es.gz = append(es.gz, gz)
		}
	}
	return es, nil
}

// packSets packs every set's ranks, in set and rank order, into one run of
// shard ConfigMaps (the packer's arithmetic refuses what would pass
// MaxShardConfigMaps before anything is copied), then writes the index
// object: index.json of the current set and, with more than one set,
// plansets.json.
func packSets(name string, sets []encodedSet) ([]Object, error) {
	packer := &shardPacker{name: name}
	indexes := make([]Index, len(sets))
	for s, es := range sets {
		indexes[s] = es.index
		indexes[s].Shards = []Shard{}
		for r, gz := range es.gz {
			_, e, _ := es.index.find(r) // readEncodedSet read every rank the index lists
			e.Key = SetRankKey(s, r)
			if err := packer.add(e, gz); err != nil {
				return nil, err
			}
			indexes[s].Shards = appendToShard(indexes[s].Shards, packer.objects[len(packer.objects)-1].Name, e)
		}
	}
	cur := indexes[0]
	index, err := encodeIndex(name, cur.Compatible, cur.Layout, cur.DecodeTPSize, cur.PlanHash, indexes[0].Shards)
	if err != nil {
		return nil, err
	}
	if len(sets) > 1 {
		raw, err := json.Marshal(SetsIndex{FormatVersion: SetsFormatVersion, PDPair: name, Sets: indexes})
		if err != nil {
			return nil, fmt.Errorf("planstore: encoding the sets index of %q: %w", name, err)
		}
		index.Data[SetsKey] = string(raw)
		// both signatures are written beside them later: leave them room
		if size := EstimatedSize(index) + 2*maxSignatureBytes; size > ShardBudgetBytes {
			return nil, formatErrorf(ReasonIndexTooLarge, "the index of %q with %d plan sets is about %d bytes; one ConfigMap holds at most %d",
				name, len(sets), size, ShardBudgetBytes)
		}
	}
	return append([]Object{index}, packer.objects...), nil
}

// appendToShard adds a rank entry to a set's shard list: to its last shard
// when the rank went into the same ConfigMap, else as a new shard.
func appendToShard(shards []Shard, configMap string, e RankEntry) []Shard {
	if n := len(shards) - 1; n >= 0 && shards[n].ConfigMap == configMap {
		shards[n].LastRank = e.Rank
		shards[n].Ranks = append(shards[n].Ranks, e)
		return shards
	}
	return append(shards, Shard{ConfigMap: configMap, FirstRank: e.Rank, LastRank: e.Rank, Ranks: []RankEntry{e}})
}

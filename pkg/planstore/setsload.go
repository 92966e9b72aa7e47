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
	"errors"
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// EngineRankSets are an agent's engine ranks' plans in every set of a
// publication made for its decode layout.
type EngineRankSets struct {
	PDPair string
	// Current is the plan hash of the publication's current set
	// (status.plan.hash), whether or not it is among Sets.
	Current string
	// Sets are the sets for the decode layout, in the publication's order
	// (so the current set first when it is among them); Sets[i].Plans[j]
	// is the plan of the j-th engine rank asked for.
	Sets []EngineRanks
}

// LoadEngineRankSetsFromDir loads the engine ranks' plans of every set of
// the publication projected in dir that is for decode (nil: the current
// set's decode layout). A publication without plansets.json (one set, or an
// operator older than this agent) is its index.json alone.
func LoadEngineRankSetsFromDir(dir string, engineRanks []int, opts ...LoadOption) (EngineRankSets, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return EngineRankSets{}, fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	return loadEngineRankSets(src, nil, engineRanks, optionsOf(opts))
}

// LoadEngineRankSets is LoadEngineRankSetsFromDir for objects read through
// the API.
func LoadEngineRankSets(objects []Object, engineRanks []int, opts ...LoadOption) (EngineRankSets, error) {
	return loadEngineRankSets(newObjectSource(objects), nil, engineRanks, optionsOf(opts))
}

// LoadSealedEngineRankSetsFromDir is LoadEngineRankSetsFromDir of the sets
// index seal names (its IndexSHA256 is plansets.json's), and no other.
func LoadSealedEngineRankSetsFromDir(dir string, seal Seal, engineRanks []int, opts ...LoadOption) (EngineRankSets, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return EngineRankSets{}, fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	return loadEngineRankSets(src, &seal, engineRanks, optionsOf(opts))
}

func loadEngineRankSets(src source, seal *Seal, engineRanks []int, o loadOptions) (EngineRankSets, error) {
	si, err := readSealedSets(src, seal)
	if err != nil {
		return EngineRankSets{}, err
	}
	want := si.Sets[0].Layout.Decode
	if o.decode != nil {
		want = *o.decode
	}
	out := EngineRankSets{PDPair: si.PDPair, Current: si.Sets[0].PlanHash}
	var published []transferplan.Parallelism
	for s := range si.Sets {
		idx := &si.Sets[s]
		published = append(published, idx.Layout.Decode)
		if idx.Layout.Decode != want {
			continue
		}
		got, err := engineRanksOf(src, idx, engineRanks)
		if err != nil {
			return EngineRankSets{}, err
		}
		out.Sets = append(out.Sets, got)
	}
	if len(out.Sets) == 0 {
		return out, decodeNotPublished(si.PDPair, out.Current, published, want)
	}
	return out, nil
}

// readSealedSets reads the sets index, or without one the index as the one
// set. With a seal, the sets index must be there and be the one it names.
func readSealedSets(src source, seal *Seal) (*SetsIndex, error) {
	raw, err := src.read("", SetsKey, MaxIndexBytes)
	switch {
	case errors.Is(err, errAbsent) && seal == nil:
		idx, err := readIndex(src)
		if err != nil {
			return nil, err
		}
		return &SetsIndex{FormatVersion: SetsFormatVersion, PDPair: idx.PDPair, Sets: []Index{*idx}}, nil
	case errors.Is(err, errAbsent):
		return nil, formatErrorf(ReasonMissingIndex, "no %s among the published plans, but its signature is there", SetsKey)
	case errors.Is(err, errTooLong):
		return nil, formatErrorf(ReasonMalformedIndex, "%s is longer than %d bytes", SetsKey, MaxIndexBytes)
	case err != nil:
		return nil, fmt.Errorf("planstore: reading %s: %w", SetsKey, err)
	}
	if seal != nil {
		if err := seal.verify(raw); err != nil {
			return nil, err
		}
	}
	si, err := decodeSetsIndex(raw)
	if err != nil {
		return nil, err
	}
	if seal != nil && (si.PDPair != seal.PDPair || si.Sets[0].PlanHash != seal.PlanHash) {
		return nil, formatErrorf(ReasonSealMismatch, "%s is the sets index of %q with current plan hash %s but the seal is for %q with plan hash %s",
			SetsKey, si.PDPair, si.Sets[0].PlanHash, seal.PDPair, seal.PlanHash)
	}
	return si, nil
}

// SplitSet is one plan set of a publication, on its own.
type SplitSet struct {
	PlanHash string
	Layout   transferplan.LayoutRecord
	// Objects are the set's objects as Encode would have made them for it
	// alone: what EncodeSets takes.
	Objects []Object
}

// SplitSets takes a publication (read back from the API) apart into its
// sets, current first, each verified end to end: every rank's bytes
// against its entry, and the set's plan hash recomputed from them. A
// caller that trusts a set's plan hash (it published it) can publish the
// set again without planning it.
func SplitSets(objects []Object) ([]SplitSet, error) {
	src := newObjectSource(objects)
	si, err := readSealedSets(src, nil)
	if err != nil {
		return nil, err
	}
	out := make([]SplitSet, 0, len(si.Sets))
	for s := range si.Sets {
		es, err := readVerifiedSet(src, &si.Sets[s])
		if err != nil {
			return nil, fmt.Errorf("planstore: plan set %d of %q: %w", s, si.PDPair, err)
		}
		objs, err := packSets(si.PDPair, []encodedSet{es})
		if err != nil {
			return nil, err
		}
		out = append(out, SplitSet{PlanHash: es.index.PlanHash, Layout: es.index.Layout, Objects: objs})
	}
	return out, nil
}

// readVerifiedSet reads a set's compressed ranks, inflating each to check
// its size and SHA-256, and the set's plan hash.
func readVerifiedSet(src source, idx *Index) (encodedSet, error) {
	hasher, err := newSetHasher(idx.Compatible, idx.Layout)
	if err != nil {
		return encodedSet{}, err
	}
	es := encodedSet{index: *idx, gz: make([][]byte, 0, idx.DecodeTPSize)}
	for _, sh := range idx.Shards {
		for _, e := range sh.Ranks {
			raw, gz, err := readRankBytes(src, sh, e)
			if err != nil {
				return encodedSet{}, err
			}
			hasher.addRank(raw)
			es.gz = append(es.gz, gz)
		}
	}
	if got := hasher.sum(); got != idx.PlanHash {
		return encodedSet{}, formatErrorf(ReasonHashMismatch, "the plans hash to %s but the index records %s", got, idx.PlanHash)
	}
	return es, nil
}

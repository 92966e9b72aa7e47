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
	"errors"
	"fmt"
	"io"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// LoadRankFromDir loads decode TP rank's plan from a directory where the index
// and every shard ConfigMap of one PDPair are projected together. It returns
// the plan, the layout it was made for and the plan-set hash.
func LoadRankFromDir(dir string, decodeTPRank int) (transferplan.RoutePlan, transferplan.LayoutRecord, string, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return transferplan.RoutePlan{}, transferplan.LayoutRecord{}, "", fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	return loadRank(src, decodeTPRank)
}

// LoadRank loads decode TP rank's plan from the index and shard objects of one
// PDPair, as read through the API.
func LoadRank(objects []Object, decodeTPRank int) (transferplan.RoutePlan, transferplan.LayoutRecord, string, error) {
	return loadRank(newObjectSource(objects), decodeTPRank)
}

// LoadIndex reads and checks the index among objects.
func LoadIndex(objects []Object) (*Index, error) { return readIndex(newObjectSource(objects)) }

// LoadSealedIndex is LoadIndex of the index seal names, and no other.
func LoadSealedIndex(objects []Object, seal Seal) (*Index, error) {
	return readSealedIndex(newObjectSource(objects), &seal)
}

// LoadPlanSet loads every rank and checks the reassembled set against the
// index's plan hash: the whole publication, verified end to end.
func LoadPlanSet(objects []Object) (*transferplan.PlanSet, error) {
	return loadPlanSet(newObjectSource(objects))
}

// LoadPlanSetFromDir is LoadPlanSet for a projected directory.
func LoadPlanSetFromDir(dir string) (*transferplan.PlanSet, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return nil, fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	return loadPlanSet(src)
}

func loadRank(src source, rank int) (transferplan.RoutePlan, transferplan.LayoutRecord, string, error) {
	idx, err := readIndex(src)
	if err != nil {
		return transferplan.RoutePlan{}, transferplan.LayoutRecord{}, "", err
	}
	shard, entry, ok := idx.find(rank)
	if !ok {
		return transferplan.RoutePlan{}, idx.Layout, idx.PlanHash, formatErrorf(ReasonRankOutOfRange,
			"decode TP rank %d is not published for %q: its plans cover decode TP ranks 0..%d", rank, idx.PDPair, idx.DecodeTPSize-1)
	}
	plan, _, err := readRank(src, shard, entry)
	return plan, idx.Layout, idx.PlanHash, err
}

func loadPlanSet(src source) (*transferplan.PlanSet, error) {
	idx, err := readIndex(src)
	if err != nil {
		return nil, err
	}
	hasher, err := newSetHasher(idx.Compatible, idx.Layout)
	if err != nil {
		return nil, err
	}
	set := &transferplan.PlanSet{Compatible: idx.Compatible, Layout: idx.Layout, Plans: make([]transferplan.RoutePlan, 0, idx.DecodeTPSize)}
	for _, shard := range idx.Shards {
		for _, entry := range shard.Ranks {
			plan, raw, err := readRank(src, shard, entry)
			if err != nil {
				return nil, err
			}
			hasher.addRank(raw)
			set.Plans = append(set.Plans, plan)
		}
	}
	if got := hasher.sum(); got != idx.PlanHash {
		return nil, formatErrorf(ReasonHashMismatch, "the plans of %q hash to %s but the index records %s", idx.PDPair, got, idx.PlanHash)
	}
	return set, nil
}

func readIndex(src source) (*Index, error) { return readSealedIndex(src, nil) }

// readSealedIndex reads the index; with a seal, its bytes must be the ones
// the seal names before anything in them is decoded or believed.
func readSealedIndex(src source, seal *Seal) (*Index, error) {
	raw, err := src.read("", IndexKey, MaxIndexBytes)
	switch {
	case errors.Is(err, errAbsent):
		return nil, formatErrorf(ReasonMissingIndex, "no %s among the published plans", IndexKey)
	case errors.Is(err, errTooLong):
		return nil, formatErrorf(ReasonMalformedIndex, "%s is longer than %d bytes", IndexKey, MaxIndexBytes)
	case err != nil:
		return nil, fmt.Errorf("planstore: reading %s: %w", IndexKey, err)
	}
	if seal != nil {
		if err := seal.verify(raw); err != nil {
			return nil, err
		}
	}
	idx, err := decodeIndex(raw)
	if err != nil {
		return nil, err
	}
	if seal != nil && (idx.PDPair != seal.PDPair || idx.PlanHash != seal.PlanHash) {
		// the bytes match, so only a seal written for another index can get here
		return nil, formatErrorf(ReasonSealMismatch, "%s is the index of %q with plan hash %s but the seal is for %q with plan hash %s",
			IndexKey, idx.PDPair, idx.PlanHash, seal.PDPair, seal.PlanHash)
	}
	return idx, nil
}

// decodeIndex decodes and checks an index's bytes.
func decodeIndex(raw []byte) (*Index, error) {
	var idx Index
	if err := decodeStrict(raw, &idx); err != nil {
		return nil, formatErrorf(ReasonMalformedIndex, "%s: %v", IndexKey, err)
	}
	if err := idx.check(); err != nil {
		return nil, err
	}
	if err := idx.checkRankBudget(); err != nil {
		return nil, err
	}
	return &idx, nil
}

// checkRankBudget sizes the plans of the index's layout before any shard is
// read: an index describing a layout whose rank plans could pass
// MaxRankPlanBytes (the plan budget's per-rank limit, which the operator
// cannot raise past it) is refused, whatever sizes its entries claim.
//
// A contract pair's record holds the contracts' hashes, not the contracts,
// so its plans cannot be sized from the index: each rank's entry is capped
// at MaxRankPlanBytes instead (Shard.check), as every entry is.
func (idx *Index) checkRankBudget() error {
	sizePlans := rulesOf(idx.Layout).sizePlans
	if sizePlans == nil {
		return nil
	}
	size, err := sizePlans(idx.Layout)
	if err != nil {
		return malformed("the layout cannot be planned: %v", err)
	}
	if size.MaxRankPlanBytes > MaxRankPlanBytes {
		return formatErrorf(ReasonPlanTooLarge, "%s of %q: one decode rank's plan could take %d bytes (%d fragments in all); an agent loads at most %d",
			IndexKey, idx.PDPair, size.MaxRankPlanBytes, size.Fragments, MaxRankPlanBytes)
	}
	return nil
}

// readRank reads, inflates and verifies one rank's plan; it also returns the
// verified canonical JSON.
func readRank(src source, shard Shard, entry RankEntry) (transferplan.RoutePlan, []byte, error) {
	var plan transferplan.RoutePlan
	raw, _, err := readRankBytes(src, shard, entry)
	if err != nil {
		return plan, nil, err
	}
	if err := decodeStrict(raw, &plan); err != nil {
		return plan, nil, formatErrorf(ReasonCorruptPlan, "key %s: %v", entry.Key, err)
	}
	if plan.DecodeTPRank != entry.Rank {
		return plan, nil, formatErrorf(ReasonCorruptPlan, "key %s holds the plan of decode TP rank %d, not %d", entry.Key, plan.DecodeTPRank, entry.Rank)
	}
	return plan, raw, nil
}

// readRankBytes reads and inflates one rank's plan and holds it to its
// entry's size and SHA-256; it returns the plan JSON and the compressed
// bytes it came from.
func readRankBytes(src source, shard Shard, entry RankEntry) (raw, gz []byte, err error) {
	gz, err = src.read(shard.ConfigMap, entry.Key, ObjectSizeLimit)
	switch {
	case errors.Is(err, errAbsent):
		return nil, nil, formatErrorf(ReasonMissingShard, "key %s of ConfigMap %s (decode TP rank %d) is missing", entry.Key, shard.ConfigMap, entry.Rank)
	case errors.Is(err, errTooLong):
		return nil, nil, formatErrorf(ReasonCorruptPlan, "key %s is longer than %d bytes", entry.Key, ObjectSizeLimit)
	case err != nil:
		return nil, nil, fmt.Errorf("planstore: reading %s: %w", entry.Key, err)
	}
	raw, err = gunzip(gz, entry.Size)
	if err != nil {
		return nil, nil, formatErrorf(ReasonCorruptPlan, "key %s of ConfigMap %s: %v", entry.Key, shard.ConfigMap, err)
	}
	if n := int64(len(raw)); n != entry.Size {
		what := fmt.Sprintf("%d bytes", n)
		if n > entry.Size {
			what = "more than that"
		}
		return nil, nil, formatErrorf(ReasonHashMismatch, "key %s of ConfigMap %s inflates to %s but the index records %d bytes (the objects are from different publications or were edited)",
			entry.Key, shard.ConfigMap, what, entry.Size)
	}
	if sum := sha256.Sum256(raw); hex.EncodeToString(sum[:]) != entry.SHA256 {
		return nil, nil, formatErrorf(ReasonHashMismatch, "key %s of ConfigMap %s has SHA-256 %x but the index records %s (the objects are from different publications or were edited)",
			entry.Key, shard.ConfigMap, sum, entry.SHA256)
	}
	return raw, gz, nil
}

// gunzip inflates at most limit bytes; a longer stream is cut at limit+1
// bytes, so the caller sees that it is too long without inflating it all.
func gunzip(gz []byte, limit int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("inflating: %w", err)
	}
	return raw, nil
}

// decodeStrict decodes one JSON value, rejecting unknown fields and trailing data.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

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

// rankBlob is one rank's plan, ready to place in a shard.
type rankBlob struct {
	entry RankEntry
	gz    []byte
}

// Encode turns a plan set into the index object followed by the shard
// objects, in that order. The output is deterministic: the same name and set
// give byte-identical objects, so a publisher can compare before it writes.
func Encode(name string, set *transferplan.PlanSet) ([]Object, error) {
	if set == nil {
		return nil, formatErrorf(ReasonMalformedIndex, "no plan set to publish for %q", name)
	}
	if err := checkName(name, len(set.Plans)); err != nil {
		return nil, err
	}
	hasher, err := newSetHasher(set.Compatible, set.Layout)
	if err != nil {
		return nil, err
	}
	blobs, err := encodeRanks(set.Plans, hasher)
	if err != nil {
		return nil, err
	}
	shards, objects, err := packShards(name, blobs)
	if err != nil {
		return nil, err
	}
	index, err := encodeIndex(name, set, hasher.sum(), shards)
	if err != nil {
		return nil, err
	}
	return append([]Object{index}, objects...), nil
}

// checkName rejects names whose last shard would not be a valid object name.
// Shard count is at most one per rank, which bounds the suffix.
func checkName(name string, ranks int) error {
	if name == "" {
		return formatErrorf(ReasonInvalidName, "the PDPair name is empty")
	}
	if longest := ShardConfigMapName(name, max(ranks-1, 0)); len(longest) > maxObjectNameLen {
		return formatErrorf(ReasonInvalidName, "PDPair name %q (%d characters) makes ConfigMap names like %q longer than %d characters",
			name, len(name), longest, maxObjectNameLen)
	}
	return nil
}

func encodeRanks(plans []transferplan.RoutePlan, hasher *setHasher) ([]rankBlob, error) {
	blobs := make([]rankBlob, len(plans))
	for i := range plans {
		if plans[i].DecodeTPRank != i {
			return nil, formatErrorf(ReasonMalformedIndex, "plan %d of the set is for decode TP rank %d; plans must be in rank order", i, plans[i].DecodeTPRank)
		}
		raw, err := json.Marshal(&plans[i])
		if err != nil {
			return nil, fmt.Errorf("planstore: encoding the plan of decode TP rank %d: %w", i, err)
		}
		hasher.addRank(raw)
		sum := sha256.Sum256(raw)
		blobs[i] = rankBlob{
			entry: RankEntry{Rank: i, Key: RankKey(i), Size: int64(len(raw)), SHA256: hex.EncodeToString(sum[:])},
			gz:    gzipBytes(raw),
		}
	}
	return blobs, nil
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

// packShards fills shards in rank order, closing one before it would pass the
// budget, so every shard holds a contiguous rank range.
func packShards(name string, blobs []rankBlob) ([]Shard, []Object, error) {
	var shards []Shard
	var objects []Object
	for _, b := range blobs {
		single := Object{Name: ShardConfigMapName(name, len(shards)), BinaryData: map[string][]byte{b.entry.Key: b.gz}}
		if size := EstimatedSize(single); size > ShardBudgetBytes {
			return nil, nil, formatErrorf(ReasonRankTooLarge,
				"the plan of decode TP rank %d is %d bytes (%d gzipped, about %d in a ConfigMap); one ConfigMap holds at most %d",
				b.entry.Rank, b.entry.Size, len(b.gz), size, ShardBudgetBytes)
		}
		n := len(objects) - 1
		if n < 0 || EstimatedSize(objects[n])+entrySize(b.entry.Key, base64Len(len(b.gz))) > ShardBudgetBytes {
			objects = append(objects, Object{Name: ShardConfigMapName(name, len(objects)), BinaryData: map[string][]byte{}})
			shards = append(shards, Shard{ConfigMap: ShardConfigMapName(name, len(shards)), FirstRank: b.entry.Rank})
			n++
		}
		objects[n].BinaryData[b.entry.Key] = b.gz
		shards[n].LastRank = b.entry.Rank
		shards[n].Ranks = append(shards[n].Ranks, b.entry)
	}
	return shards, objects, nil
}

func encodeIndex(name string, set *transferplan.PlanSet, planHash string, shards []Shard) (Object, error) {
	idx := Index{
		FormatVersion: FormatVersion,
		PDPair:        name,
		PlanHash:      planHash,
		Compatible:    set.Compatible,
		DecodeTPSize:  len(set.Plans),
		Layout:        set.Layout,
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
			name, size, len(set.Plans), len(shards), ShardBudgetBytes)
	}
	return obj, nil
}

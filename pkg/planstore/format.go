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
	"fmt"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// FormatVersion is the newest version of the published format, which this
// package reads along with version 1. Version 2 added the keys of
// cache-contract pairs (the layout record's wire and contract hashes, the
// targets' contractFragments). Plans of v1-wire pairs hold none of them and
// are still published as version 1, byte for byte as before, so that agents
// that read only version 1 keep loading them; contract pairs are published
// as version 2, which such agents refuse by its number.
const FormatVersion = 2

// formatVersionOf is the version a publication of plans for layout carries.
func formatVersionOf(layout transferplan.LayoutRecord) int { return rulesOf(layout).formatVersion }

// IndexKey is the data key of the index ConfigMap.
const IndexKey = "index.json"

const (
	// ObjectSizeLimit is the API server's limit on one ConfigMap's data.
	ObjectSizeLimit = 1 << 20
	// ShardBudgetBytes bounds the estimated serialised size of every object
	// this package produces; the rest of ObjectSizeLimit is margin for labels,
	// owner references and managed fields the controller adds.
	ShardBudgetBytes = 768 << 10
	// metadataAllowance is what an object's metadata and envelope are assumed
	// to take in the size estimate.
	metadataAllowance = 4 << 10
	// MaxRankPlanBytes caps one rank's uncompressed plan JSON on load, so that
	// a hostile volume cannot make the agent inflate gigabytes.
	MaxRankPlanBytes = 64 << 20
	// MaxIndexBytes caps the index read on load.
	MaxIndexBytes = ObjectSizeLimit
	// MaxShardConfigMaps bounds the shard ConfigMaps of one pair. Shard names
	// are deterministic (ShardConfigMapName), so a decode pod can project the
	// index and every possible shard (optional) into one directory at
	// admission, and later spec changes that change the shard count reach it
	// without a restart. The plan budget keeps every admitted pair within it.
	MaxShardConfigMaps = 32
)

// Index is the content of the index ConfigMap's "index.json".
type Index struct {
	FormatVersion int    `json:"formatVersion"`
	PDPair        string `json:"pdpair"`
	// PlanHash is transferplan.(*PlanSet).Hash of the published plan set.
	PlanHash   string `json:"planHash"`
	Compatible bool   `json:"compatible"`
	// DecodeTPSize is the number of plans: one per decode TP rank of a DP group.
	DecodeTPSize int                       `json:"decodeTPSize"`
	Layout       transferplan.LayoutRecord `json:"layout"`
	Shards       []Shard                   `json:"shards"`
}

// Shard says which ConfigMap holds which ranks.
type Shard struct {
	ConfigMap string `json:"configMap"`
	// FirstRank and LastRank bound the shard's ranks, inclusive.
	FirstRank int         `json:"firstRank"`
	LastRank  int         `json:"lastRank"`
	Ranks     []RankEntry `json:"ranks"`
}

// RankEntry locates and verifies one decode rank's plan.
type RankEntry struct {
	Rank int    `json:"rank"`
	Key  string `json:"key"`
	// Size is the length of the uncompressed plan JSON.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of the uncompressed plan JSON.
	SHA256 string `json:"sha256"`
}

// Object is one ConfigMap's name and content, without any Kubernetes type.
type Object struct {
	Name       string
	Data       map[string]string
	BinaryData map[string][]byte
}

// IndexConfigMapName is the name of a PDPair's index ConfigMap.
func IndexConfigMapName(pdpair string) string { return pdpair + "-plans" }

// ShardConfigMapName is the name of a PDPair's n-th shard ConfigMap.
func ShardConfigMapName(pdpair string, n int) string { return fmt.Sprintf("%s-plans-%d", pdpair, n) }

// ShardNumber is n when name is ShardConfigMapName(pdpair, n), written as
// ShardConfigMapName writes it (no sign, no leading zero); ok is false for
// any other name.
func ShardNumber(pdpair, name string) (n int, ok bool) {
	digits, found := strings.CutPrefix(name, pdpair+"-plans-")
	if !found || digits == "" || len(digits) > 9 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// RankKey is the key of a decode rank's plan; zero-padded so keys sort by rank.
func RankKey(rank int) string { return fmt.Sprintf("rank-%04d.json.gz", rank) }

// EstimatedSize is the serialised size an object is budgeted for: keys, values
// (binary values as base64, as JSON carries them) and a metadata allowance.
func EstimatedSize(o Object) int {
	n := metadataAllowance + len(o.Name)
	for k, v := range o.Data {
		n += entrySize(k, len(v))
	}
	for k, v := range o.BinaryData {
		n += entrySize(k, base64Len(len(v)))
	}
	return n
}

// entrySize is a key/value pair in JSON: quotes, colon, comma, and a little
// slack for escaping in string values.
func entrySize(key string, valueLen int) int { return len(key) + valueLen + 8 + valueLen/64 }

func base64Len(n int) int { return (n + 2) / 3 * 4 }

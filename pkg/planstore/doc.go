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

// Package planstore is the published form of a PDPair's route plans: how a
// transferplan.PlanSet becomes a handful of ConfigMaps (keys → bytes) and how a
// receiver agent gets one decode rank's plan back from them, verified.
//
// The package is pure: it knows nothing of Kubernetes clients. The controller
// turns its Objects into ConfigMaps; an agent reads them from a mounted volume
// or from objects it fetched itself.
//
// # Objects
//
// For a PDPair named N the publication is:
//
//   - the index ConfigMap "N-plans", one data key "index.json" (plain JSON, see
//     Index): format version, PDPair name, the layout the plans were made for,
//     the plan-set hash, the decode TP size, and for every shard its ConfigMap
//     name, its rank range and, per rank, the key, the uncompressed size and the
//     SHA-256 of the rank's plan;
//   - shard ConfigMaps "N-plans-0", "N-plans-1", … whose binaryData keys are
//     "rank-0000.json.gz", "rank-0001.json.gz", …: the gzip of one decode TP
//     rank's canonical RoutePlan JSON (encoding/json of transferplan.RoutePlan,
//     the same bytes `pdtopo plan -o json` prints for that rank, compact).
//
// Ranks are packed into shards in ascending order, so every shard holds a
// contiguous rank range, and a shard is closed before its estimated serialised
// size (keys, base64 of every value as JSON carries binaryData, plus a
// metadata allowance) passes ShardBudgetBytes, well under the API server's
// 1 MiB object limit. Keys are unique across the index and every shard, so the
// index and all shards can be projected into one directory.
//
// # Loading
//
// LoadRankFromDir reads a directory in which the index and every shard
// ConfigMap are projected together (a projected volume). Kubernetes writes
// such a directory atomically: the visible files are symlinks into "..data",
// itself a symlink to a timestamped directory that is swapped on update. The
// loader resolves "..data" once and reads every file through that one
// snapshot, so an update between two reads cannot mix generations. LoadRank
// does the same from objects read through the API.
//
// Everything read is untrusted: sizes are capped before decompression, the
// rank's uncompressed bytes must match the index's size and SHA-256, the plan
// must decode strictly and name the rank that was asked for. Failures are
// *FormatError values with a stable reason and a message naming the key and
// the numbers.
package planstore

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
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

// A key this version does not know is refused, in the index and in a plan,
// even when everything else is valid: decoding is strict so that a
// publication of another format version is never half-understood (the rule
// TestFormatKeysBelongToTheirFormatVersion holds the format to).
func TestLoadRefusesUnknownKeys(t *testing.T) {
	good := mustEncode(t, "p", gqaP8D4(t))
	if _, _, _, err := LoadRank(good, 1); err != nil {
		t.Fatalf("the unedited publication: %v", err)
	}

	index := good[0].Data[IndexKey]
	withKey := strings.Replace(index, `"formatVersion":1,`, `"formatVersion":1,"shardHint":3,`, 1)
	if withKey == index {
		t.Fatal("fixture: the index does not start with formatVersion 1")
	}
	objs := append([]Object{{Name: good[0].Name, Data: map[string]string{IndexKey: withKey}}}, good[1:]...)
	_, _, _, err := LoadRank(objs, 1)
	assertFormatError(t, err, ReasonMalformedIndex, `unknown field "shardHint"`)

	// rank 1's plan with one more key, its size and hash recorded in the
	// index so that only the key is wrong
	plan := string(gunzipForTest(t, good[1].BinaryData[RankKey(1)]))
	edited := strings.Replace(plan, `{"decodeTPRank":1,`, `{"decodeTPRank":1,"pageCount":2,`, 1)
	if edited == plan {
		t.Fatal("fixture: the plan does not start with decodeTPRank 1")
	}
	sum := sha256.Sum256([]byte(edited))
	objs = editIndex(t, editShard(good, RankKey(1), gzipBytes([]byte(edited))), func(i *Index) {
		i.Shards[0].Ranks[1].Size, i.Shards[0].Ranks[1].SHA256 = int64(len(edited)), hex.EncodeToString(sum[:])
	})
	_, _, _, err = LoadRank(objs, 1)
	assertFormatError(t, err, ReasonCorruptPlan, `unknown field "pageCount"`)
}

func gunzipForTest(t *testing.T, gz []byte) []byte {
	t.Helper()
	raw, err := gunzip(gz, MaxRankPlanBytes)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

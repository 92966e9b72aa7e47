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
	"encoding/json"
	"fmt"
	"hash"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// setHasher computes transferplan.(*PlanSet).Hash from the rank plans' JSON as
// they stream past, instead of marshalling the whole set a second time (for a
// 1024-rank layout that is ~100 MB of JSON). encoding/json writes a struct as
// its fields in order with no spaces, so the set's canonical JSON is exactly
// {"compatible":…,"layout":…,"plans":[rank0,rank1,…]}. A test pins this to
// PlanSet.Hash.
type setHasher struct {
	h     hash.Hash
	ranks int
}

func newSetHasher(compatible bool, layout transferplan.LayoutRecord) (*setHasher, error) {
	rec, err := json.Marshal(layout)
	if err != nil {
		return nil, fmt.Errorf("planstore: encoding the layout record: %w", err)
	}
	s := &setHasher{h: sha256.New()}
	fmt.Fprintf(s.h, `{"compatible":%t,"layout":`, compatible)
	s.h.Write(rec)
	s.h.Write([]byte(`,"plans":[`))
	return s, nil
}

// addRank feeds the next rank's canonical plan JSON.
func (s *setHasher) addRank(planJSON []byte) {
	if s.ranks > 0 {
		s.h.Write([]byte{','})
	}
	s.h.Write(planJSON)
	s.ranks++
}

func (s *setHasher) sum() string {
	s.h.Write([]byte("]}"))
	return hex.EncodeToString(s.h.Sum(nil))
}

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
	"fmt"
)

// NewSetsSeal seals the sets index of the index object EncodeSets returned
// (its plansets.json): what the sets signature states.
func NewSetsSeal(pdpair, uid string, generation int64, index Object) (Seal, error) {
	raw, ok := index.Data[SetsKey]
	if !ok || index.Name != IndexConfigMapName(pdpair) {
		return Seal{}, fmt.Errorf("planstore: sealing the sets of %q: object %s has no %s", pdpair, index.Name, SetsKey)
	}
	si, err := decodeSetsIndex([]byte(raw))
	if err != nil {
		return Seal{}, err
	}
	if si.PDPair != pdpair {
		return Seal{}, fmt.Errorf("planstore: sealing the sets of %q: the sets index is the one of %q", pdpair, si.PDPair)
	}
	sum := sha256.Sum256([]byte(raw))
	s := Seal{FormatVersion: SealFormatVersion, PDPair: pdpair, UID: uid, Generation: generation, IndexSHA256: hex.EncodeToString(sum[:]), PlanHash: si.Sets[0].PlanHash}
	return s, s.check()
}

// DecodeSetsSignature is DecodeSignature of "plansets.sig".
func (keys PublicKeys) DecodeSetsSignature(raw []byte) (Statement, error) {
	return keys.decode(setsSignature, raw)
}

// ReadSetsSignatureDir is ReadSignatureDir of "plansets.sig": the seal the
// sets index must match (LoadSealedEngineRankSetsFromDir). Its absence is
// ReasonMissingSignature: a publication of one set, or by an operator older
// than this agent, is loaded through index.sig instead.
func ReadSetsSignatureDir(dir string, keys PublicKeys, namespace, pdpair string) (Statement, error) {
	return readSignatureDir(setsSignature, dir, keys, namespace, pdpair)
}

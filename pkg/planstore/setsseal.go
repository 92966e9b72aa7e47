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

// NewSetsSeal seals the sets index of the index object EncodeSets returned
// (its plansets.json): what the sets signature states.
func NewSetsSeal(pdpair, uid string, generation int64, index Object) (Seal, error) {
	return sealKey(pdpair, uid, generation, index, SetsKey, func(raw []byte) (string, string, error) {
		si, err := decodeSetsIndex(raw)
		if err != nil {
			return "", "", err
		}
		return si.PDPair, si.Sets[0].PlanHash, nil
	})
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

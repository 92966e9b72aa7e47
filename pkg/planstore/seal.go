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
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// A seal is the operator's statement of which index it published for a
// PDPair: the pair's name, UID and generation, and the SHA-256 of the
// index's bytes (which in turn records the size and SHA-256 of every rank's
// plan). It travels by a channel that someone who can only write ConfigMaps
// cannot write or shadow, a Secret the operator owns (SealSecretName),
// mounted into decode pods as a volume of its own; a loader given a seal
// trusts no index whose bytes it does not match. See docs/decode-pods.md.

// SealKey is the data key of the seal Secret.
const SealKey = "seal.json"

// SealFormatVersion is the seal format this package writes and reads.
const SealFormatVersion = 1

// maxSealBytes bounds the seal read on load; a seal is about 300 bytes.
const maxSealBytes = 4 << 10

// Seal is the content of the seal Secret's "seal.json".
type Seal struct {
	FormatVersion int    `json:"formatVersion"`
	PDPair        string `json:"pdpair"`
	// UID and Generation are the PDPair's metadata.uid and the
	// metadata.generation the plans were made for.
	UID        string `json:"uid"`
	Generation int64  `json:"generation"`
	// IndexSHA256 is the hex SHA-256 of the index ConfigMap's "index.json"
	// bytes; empty when the operator publishes nothing for this generation
	// (the layout is incompatible or over the plan budget).
	IndexSHA256 string `json:"indexSHA256"`
	// PlanHash is the index's plan hash (status.plan.hash); empty with
	// IndexSHA256.
	PlanHash string `json:"planHash"`
}

// SealSecretName is the name of a PDPair's seal Secret.
func SealSecretName(pdpair string) string { return pdpair + "-plans-seal" }

// NewSeal seals the index object Encode returned (objects[0]) for a PDPair.
func NewSeal(pdpair, uid string, generation int64, index Object) (Seal, error) {
	return sealKey(pdpair, uid, generation, index, IndexKey, func(raw []byte) (string, string, error) {
		idx, err := decodeIndex(raw)
		if err != nil {
			return "", "", err
		}
		return idx.PDPair, idx.PlanHash, nil
	})
}

// sealKey seals the document under key of the pair's index object: its
// SHA-256 and the plan hash decode reads from it (with the pair it names).
func sealKey(pdpair, uid string, generation int64, index Object, key string, decode func([]byte) (owner, planHash string, err error)) (Seal, error) {
	raw, ok := index.Data[key]
	if !ok || index.Name != IndexConfigMapName(pdpair) {
		return Seal{}, fmt.Errorf("planstore: sealing %q: object %s has no %s (not the index of this pair)", pdpair, index.Name, key)
	}
	owner, planHash, err := decode([]byte(raw))
	if err != nil {
		return Seal{}, err
	}
	if owner != pdpair {
		return Seal{}, fmt.Errorf("planstore: sealing %q: its %s is the one of %q", pdpair, key, owner)
	}
	sum := sha256.Sum256([]byte(raw))
	s := Seal{FormatVersion: SealFormatVersion, PDPair: pdpair, UID: uid, Generation: generation, IndexSHA256: hex.EncodeToString(sum[:]), PlanHash: planHash}
	return s, s.check()
}

// WithdrawnSeal says that nothing is published for the pair's generation:
// a loader refuses every index while it holds this seal.
func WithdrawnSeal(pdpair, uid string, generation int64) Seal {
	return Seal{FormatVersion: SealFormatVersion, PDPair: pdpair, UID: uid, Generation: generation}
}

// Published reports whether the seal names an index.
func (s Seal) Published() bool { return s.IndexSHA256 != "" }

// Encode is the seal's canonical JSON.
func (s Seal) Encode() ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// DecodeSeal reads a seal from untrusted bytes: strictly (unknown fields and
// trailing data are errors), bounded, and with every field checked.
func DecodeSeal(raw []byte) (Seal, error) {
	var s Seal
	if len(raw) > maxSealBytes {
		return s, formatErrorf(ReasonMalformedSeal, "%s is %d bytes; a seal is at most %d", SealKey, len(raw), maxSealBytes)
	}
	if err := decodeStrict(raw, &s); err != nil {
		return Seal{}, formatErrorf(ReasonMalformedSeal, "%s: %v", SealKey, err)
	}
	if err := s.check(); err != nil {
		return Seal{}, err
	}
	return s, nil
}

// objectName matches a Kubernetes object name (a DNS subdomain).
var objectName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

func (s Seal) check() error {
	bad := func(format string, args ...any) error {
		return formatErrorf(ReasonMalformedSeal, SealKey+": "+format, args...)
	}
	switch {
	case s.FormatVersion != SealFormatVersion:
		return formatErrorf(ReasonUnsupportedVersion, "%s has formatVersion %d; this agent reads %d", SealKey, s.FormatVersion, SealFormatVersion)
	case len(s.PDPair) > maxObjectNameLen || !objectName.MatchString(s.PDPair):
		return bad("pdpair %q is not an object name", s.PDPair)
	case s.UID == "" || len(s.UID) > 128:
		return bad("uid %q is empty or longer than 128 bytes", s.UID)
	case s.Generation < 1:
		return bad("generation %d is not positive", s.Generation)
	case s.Published() && !isHexSHA256(s.IndexSHA256):
		return bad("indexSHA256 %q is not 64 lowercase hex digits", s.IndexSHA256)
	case s.Published() && !isHexSHA256(s.PlanHash):
		return bad("planHash %q is not 64 lowercase hex digits", s.PlanHash)
	case !s.Published() && s.PlanHash != "":
		return bad("planHash %q without an indexSHA256", s.PlanHash)
	}
	return nil
}

func isHexSHA256(s string) bool {
	if len(s) != 64 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// verify checks an index's bytes, before they are decoded, against the seal.
func (s Seal) verify(raw []byte) error {
	if !s.Published() {
		return formatErrorf(ReasonNotPublished, "the operator publishes no plans for generation %d of %q (its seal names no index); "+
			"the plans in use are kept, and none found where the plans are projected is trusted", s.Generation, s.PDPair)
	}
	sum := sha256.Sum256(raw)
	if got := hex.EncodeToString(sum[:]); got != s.IndexSHA256 {
		return formatErrorf(ReasonSealMismatch, "%s has SHA-256 %s but the operator sealed %s for generation %d of %q "+
			"(a ConfigMap the operator did not write is projected under a plan name, or the new plans or seal have not reached the pod yet)",
			IndexKey, got, s.IndexSHA256, s.Generation, s.PDPair)
	}
	return nil
}

// readSeal reads and decodes the seal from src; a seal that is absent is
// ReasonMissingSeal.
func readSeal(src source) (Seal, error) {
	raw, err := src.read("", SealKey, maxSealBytes)
	switch {
	case errors.Is(err, errAbsent):
		return Seal{}, formatErrorf(ReasonMissingSeal, "no %s: the operator has not sealed plans for this pair yet (its Secret is created with the first publication)", SealKey)
	case errors.Is(err, errTooLong):
		return Seal{}, formatErrorf(ReasonMalformedSeal, "%s is longer than %d bytes", SealKey, maxSealBytes)
	case err != nil:
		return Seal{}, fmt.Errorf("planstore: reading %s: %w", SealKey, err)
	}
	return DecodeSeal(raw)
}

// ReadSealDir reads the seal from the directory its Secret is mounted at,
// through one snapshot of the kubelet's "..data" link.
func ReadSealDir(dir string) (Seal, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return Seal{}, fmt.Errorf("planstore: reading seal directory %s: %w", dir, err)
	}
	return readSeal(src)
}

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
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A signature is the operator's seal carried beside the index it seals, in
// the index ConfigMap itself ("index.sig"): the pair's namespace, name, UID
// and generation, the index's SHA-256 and plan hash, signed with the
// manager's ed25519 key. Whoever can write ConfigMaps (or Secrets) in the
// pair's namespace can replace both keys, but cannot sign: an agent given
// the manager's public keys loads only an index signed for its own pair,
// and (plansource.Signed) never one of a generation older than the one it
// holds. See docs/plan-format.md, "Signed index".

// SignatureKey is the index ConfigMap's data key holding the signature.
const SignatureKey = "index.sig"

// SignatureFormatVersion is the signature format this package writes and reads.
const SignatureFormatVersion = 1

// signatureDomain prefixes the signed bytes, so that a signature made for
// plans can never be taken for one made by the same key for anything else.
const signatureDomain = "pdtopo.dev/plan-index-signature/v1\n"

// SetsSignatureKey is the index ConfigMap's data key holding the signature
// of the sets index (SetsKey): the same statement, its indexSHA256 the
// SHA-256 of plansets.json's bytes and its planHash the current set's.
const SetsSignatureKey = "plansets.sig"

// setsSignatureDomain prefixes the signed bytes of a sets signature, so
// that neither signature can stand for the other.
const setsSignatureDomain = "pdtopo.dev/plan-sets-signature/v1\n"

// signatureKind is one of the two signatures: its key, the key it signs,
// and its signing domain.
type signatureKind struct{ key, of, domain string }

var (
	indexSignature = signatureKind{key: SignatureKey, of: IndexKey, domain: signatureDomain}
	setsSignature  = signatureKind{key: SetsSignatureKey, of: SetsKey, domain: setsSignatureDomain}
)

// maxSignatureBytes bounds the signature read on load; one is about 500 bytes.
const maxSignatureBytes = 4 << 10

// Statement is what the manager signs for one publication.
type Statement struct {
	FormatVersion int    `json:"formatVersion"`
	KeyID         string `json:"keyID"`
	Namespace     string `json:"namespace"`
	PDPair        string `json:"pdpair"`
	UID           string `json:"uid"`
	Generation    int64  `json:"generation"`
	IndexSHA256   string `json:"indexSHA256"`
	PlanHash      string `json:"planHash"`
}

// Signature is the content of "index.sig": the statement and the base64
// (standard, padded) ed25519 signature of signatureDomain followed by the
// statement's JSON.
type Signature struct {
	Statement
	Signature string `json:"signature"`
}

// Seal is the statement as a seal: what the index's bytes must match.
func (s Statement) Seal() Seal {
	return Seal{FormatVersion: SealFormatVersion, PDPair: s.PDPair, UID: s.UID, Generation: s.Generation,
		IndexSHA256: s.IndexSHA256, PlanHash: s.PlanHash}
}

func (s Statement) signedBytes(domain string) []byte {
	raw, _ := json.Marshal(s) // a struct of strings and ints always marshals
	return append([]byte(domain), raw...)
}

func (s Statement) check(kind signatureKind) error {
	bad := func(format string, args ...any) error {
		return formatErrorf(ReasonMalformedSignature, kind.key+": "+format, args...)
	}
	switch {
	case s.FormatVersion != SignatureFormatVersion:
		return formatErrorf(ReasonUnsupportedVersion, "%s has formatVersion %d; this agent reads %d", kind.key, s.FormatVersion, SignatureFormatVersion)
	case !isKeyID(s.KeyID):
		return bad("keyID %q is not 16 lowercase hex digits", s.KeyID)
	case len(s.Namespace) > 63 || !objectName.MatchString(s.Namespace):
		return bad("namespace %q is not a namespace name", s.Namespace)
	}
	seal := s.Seal()
	if err := seal.check(); err != nil {
		return bad("%v", err)
	}
	if !seal.Published() {
		return bad("names no index")
	}
	return nil
}

// KeyID names a public key: the first 8 bytes of its SHA-256, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

func isKeyID(s string) bool { return len(s) == 16 && isLowerHex(s) }

func isLowerHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// Signer signs publications with the manager's key.
type Signer struct {
	key ed25519.PrivateKey
	id  string
}

// NewSigner signs with key.
func NewSigner(key ed25519.PrivateKey) *Signer {
	return &Signer{key: key, id: KeyID(key.Public().(ed25519.PublicKey))}
}

// PublicKey is the key agents verify with.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// Sign adds the signature of the index object Encode returned (objects[0])
// for the PDPair namespace/pdpair with that UID and generation, as
// SignatureKey of the same object.
func (s *Signer) Sign(namespace, pdpair, uid string, generation int64, index *Object) error {
	seal, err := NewSeal(pdpair, uid, generation, *index)
	if err != nil {
		return err
	}
	if err := s.sign(indexSignature, namespace, seal, index); err != nil {
		return err
	}
	if _, ok := index.Data[SetsKey]; !ok {
		return nil
	}
	if seal, err = NewSetsSeal(pdpair, uid, generation, *index); err != nil {
		return err
	}
	return s.sign(setsSignature, namespace, seal, index)
}

// sign writes the signature of kind stating seal into index.
func (s *Signer) sign(kind signatureKind, namespace string, seal Seal, index *Object) error {
	st := Statement{FormatVersion: SignatureFormatVersion, KeyID: s.id, Namespace: namespace, PDPair: seal.PDPair,
		UID: seal.UID, Generation: seal.Generation, IndexSHA256: seal.IndexSHA256, PlanHash: seal.PlanHash}
	if err := st.check(kind); err != nil {
		return err
	}
	sig := Signature{Statement: st, Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(s.key, st.signedBytes(kind.domain)))}
	raw, err := json.Marshal(sig)
	if err != nil {
		return err
	}
	if index.Data == nil {
		index.Data = map[string]string{}
	}
	index.Data[kind.key] = string(raw)
	return nil
}

// PublicKeys are the keys an agent accepts signatures from, by key id.
type PublicKeys map[string]ed25519.PublicKey

// ParsePublicKeys reads comma-separated base64 (standard) ed25519 public
// keys, as the webhook passes them (--plan-public-keys). During a rotation
// the manager's old and new keys are both listed.
func ParsePublicKeys(list string) (PublicKeys, error) {
	keys := PublicKeys{}
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("planstore: %q is not a base64 ed25519 public key (%d bytes)", s, ed25519.PublicKeySize)
		}
		keys[KeyID(b)] = ed25519.PublicKey(b)
	}
	if len(keys) == 0 {
		return nil, errors.New("planstore: no public key given")
	}
	return keys, nil
}

// EncodePublicKey is the form ParsePublicKeys reads.
func EncodePublicKey(pub ed25519.PublicKey) string { return base64.StdEncoding.EncodeToString(pub) }

// DecodeSignature reads "index.sig" from untrusted bytes and verifies it:
// strictly decoded, bounded, every field checked, and signed by one of keys.
// It says nothing of whom the signature is for; see VerifyFor.
func (keys PublicKeys) DecodeSignature(raw []byte) (Statement, error) {
	return keys.decode(indexSignature, raw)
}

func (keys PublicKeys) decode(kind signatureKind, raw []byte) (Statement, error) {
	if len(raw) > maxSignatureBytes {
		return Statement{}, formatErrorf(ReasonMalformedSignature, "%s is %d bytes; a signature is at most %d", kind.key, len(raw), maxSignatureBytes)
	}
	var sig Signature
	if err := decodeStrict(raw, &sig); err != nil {
		return Statement{}, formatErrorf(ReasonMalformedSignature, "%s: %v", kind.key, err)
	}
	if err := sig.check(kind); err != nil {
		return Statement{}, err
	}
	b, err := base64.StdEncoding.Strict().DecodeString(sig.Signature)
	if err != nil || len(b) != ed25519.SignatureSize {
		return Statement{}, formatErrorf(ReasonMalformedSignature, "%s: signature is not %d bytes of base64", kind.key, ed25519.SignatureSize)
	}
	pub, ok := keys[sig.KeyID]
	if !ok {
		return Statement{}, formatErrorf(ReasonBadSignature, "%s is signed by key %s, which is not one of the operator's keys this agent was given", kind.key, sig.KeyID)
	}
	if !ed25519.Verify(pub, sig.signedBytes(kind.domain), b) {
		return Statement{}, formatErrorf(ReasonBadSignature, "%s does not verify with the operator's key %s: it was not signed by the operator", kind.key, sig.KeyID)
	}
	return sig.Statement, nil
}

// VerifyFor is DecodeSignature of a signature that must be for the PDPair
// namespace/pdpair (and, when uid is not "", that UID).
func (keys PublicKeys) VerifyFor(raw []byte, namespace, pdpair, uid string) (Statement, error) {
	return keys.verifyFor(indexSignature, raw, namespace, pdpair, uid)
}

func (keys PublicKeys) verifyFor(kind signatureKind, raw []byte, namespace, pdpair, uid string) (Statement, error) {
	st, err := keys.decode(kind, raw)
	if err != nil {
		return Statement{}, err
	}
	if st.Namespace != namespace || st.PDPair != pdpair || (uid != "" && st.UID != uid) {
		return Statement{}, formatErrorf(ReasonBadSignature, "%s is signed for PDPair %s/%s (uid %s), not for %s/%s, the pair this agent serves",
			kind.key, st.Namespace, st.PDPair, st.UID, namespace, pdpair)
	}
	return st, nil
}

// ReadSignatureDir reads and verifies the signature projected into the plan
// directory (beside index.json) for the PDPair namespace/pdpair.
func ReadSignatureDir(dir string, keys PublicKeys, namespace, pdpair string) (Statement, error) {
	return readSignatureDir(indexSignature, dir, keys, namespace, pdpair)
}

func readSignatureDir(kind signatureKind, dir string, keys PublicKeys, namespace, pdpair string) (Statement, error) {
	src, err := newDirSource(dir)
	if err != nil {
		return Statement{}, fmt.Errorf("planstore: reading plan directory %s: %w", dir, err)
	}
	raw, err := src.read("", kind.key, maxSignatureBytes)
	switch {
	case errors.Is(err, errAbsent):
		return Statement{}, formatErrorf(ReasonMissingSignature, "no %s beside %s: the operator has not signed plans for this pair (yet)", kind.key, kind.of)
	case errors.Is(err, errTooLong):
		return Statement{}, formatErrorf(ReasonMalformedSignature, "%s is longer than %d bytes", kind.key, maxSignatureBytes)
	case err != nil:
		return Statement{}, fmt.Errorf("planstore: reading %s: %w", kind.key, err)
	}
	return keys.verifyFor(kind, raw, namespace, pdpair, "")
}

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

package kvwire

import (
	"errors"
	"fmt"
)

// MessageKind names the message an Error is about.
type MessageKind string

const (
	KindRegistration     MessageKind = "registration"
	KindRequest          MessageKind = "request"
	KindStatus           MessageKind = "status"
	KindRankRegistration MessageKind = "rank registration"
	KindParallelInfo     MessageKind = "parallel info"
	KindRankAddress      MessageKind = "rank address"
	KindFragments        MessageKind = "fragments"
)

// Reason is a stable, machine-readable code for why a message was rejected.
// Callers count and branch on reasons, never on Error() text.
type Reason string

const (
	// ReasonFrameCount: the message has a number of frames no sender writes.
	ReasonFrameCount Reason = "FrameCount"
	// ReasonNotRegistration: frame 0 of a registration is not "None".
	ReasonNotRegistration Reason = "NotRegistration"
	// ReasonNotASCII: a text field holds bytes outside printable ASCII.
	ReasonNotASCII Reason = "NotASCII"
	// ReasonNotAnInteger: a field that must be ASCII decimal is not.
	ReasonNotAnInteger Reason = "NotAnInteger"
	// ReasonOutOfRange: a number is outside what the field can hold.
	ReasonOutOfRange Reason = "OutOfRange"
	// ReasonMisalignedArray: an array frame's length is not a multiple of
	// its element size.
	ReasonMisalignedArray Reason = "MisalignedArray"
	// ReasonInvalidValue: a field is well-formed but not an allowed value
	// (a flag other than "0"/"1", a mask byte other than 0/1, a session id
	// that is not host:port, …).
	ReasonInvalidValue Reason = "InvalidValue"
	// ReasonUnknownStatus: a status number that is not a TransferPoll state.
	ReasonUnknownStatus Reason = "UnknownStatus"
	// ReasonInconsistentDummy: a dummy request (frames 4 and 5 empty) that
	// carries payload frames or fragments.
	ReasonInconsistentDummy Reason = "InconsistentDummy"
	// ReasonInconsistentL15Pages: with the MLA L1.5 flag set, the page mask
	// does not cover the kv indices or the local indices do not match it.
	ReasonInconsistentL15Pages Reason = "InconsistentL15Pages"
	// ReasonInvalidFragments: a request's fragment frames do not decode; Err
	// holds the fragment decoder's error (a KindFragments *Error from
	// DecodeFragments).
	ReasonInvalidFragments Reason = "InvalidFragments"
	// ReasonUnsupportedVersion: the fragment version frame is not "1".
	ReasonUnsupportedVersion Reason = "UnsupportedVersion"
	// ReasonMalformedJSON: a bootstrap body or a fragment list is not the
	// expected JSON shape.
	ReasonMalformedJSON Reason = "MalformedJSON"
	// ReasonMissingField: a required JSON key is absent or null.
	ReasonMissingField Reason = "MissingField"
)

// Error says why a message could not be decoded (or, from a Validate method,
// would not parse on the reference side).
type Error struct {
	Kind   MessageKind
	Reason Reason
	// Frame is the index of the offending ZMQ frame, or -1 when the error is
	// not about one frame (frame count, JSON bodies).
	Frame int
	// Field is the wire name of the offending field ("kv_indices",
	// "rank_port", …), or empty.
	Field  string
	Detail string
	// Err is the underlying cause, when there is one (the fragment
	// decoder's error for ReasonInvalidFragments).
	Err error
}

func (e *Error) Error() string {
	where := ""
	switch {
	case e.Frame >= 0 && e.Field != "":
		where = fmt.Sprintf(" frame %d (%s)", e.Frame, e.Field)
	case e.Frame >= 0:
		where = fmt.Sprintf(" frame %d", e.Frame)
	case e.Field != "":
		where = " " + e.Field
	}
	return fmt.Sprintf("kvwire: %s%s: %s: %s", e.Kind, where, e.Reason, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// ReasonOf returns the Reason of the first *Error in err's chain, or "" when
// there is none.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// AsError is the *Error in err's chain (the checks return error so that
// their nil is a nil interface).
func AsError(err error) *Error {
	var e *Error
	errors.As(err, &e)
	return e
}

// FrameError is an *Error about frame (or -1) and field of a kind of
// message.
func FrameError(kind MessageKind, frame int, field string, reason Reason, format string, args ...any) *Error {
	return &Error{Kind: kind, Reason: reason, Frame: frame, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// FieldError is an *Error about a field, not one frame.
func FieldError(kind MessageKind, field string, reason Reason, format string, args ...any) *Error {
	return FrameError(kind, -1, field, reason, format, args...)
}

// Quote renders at most 40 bytes of untrusted input for an error detail.
func Quote(b []byte) string {
	const limit = 40
	if len(b) > limit {
		return fmt.Sprintf("%q… (%d bytes)", b[:limit], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// The messages of tokenspeed's cache-contract wire, as named in an Error.
const (
	KindContractParallelInfo     MessageKind = "contract parallel info"
	KindContractRankRegistration MessageKind = "contract rank registration"
	KindContractRegistration     MessageKind = "contract registration"
	KindPreAllocation            MessageKind = "pre-allocation"
	KindContract                 MessageKind = "cache contract"
	KindManifest                 MessageKind = "block manifest"
	KindBootstrapAnswer          MessageKind = "bootstrap answer"
)

// Reasons of the cache-contract wire. The Manifest… reasons are the checks
// the engine's validate_cache_manifest makes, in its order; a refusal names
// the group and the numbers.
const (
	// ReasonPayloadSize: a payload is empty or over its budget (a contract
	// 1..MaxContractBytes, a manifest 1..MaxManifestBytes).
	ReasonPayloadSize Reason = "PayloadSize"
	// ReasonNotCanonical: an ASCII number the engine reads with
	// _bounded_ascii_uint has a sign, a leading zero or too many digits.
	ReasonNotCanonical Reason = "NotCanonical"
	// ReasonUnknownField: a JSON key no sender writes.
	ReasonUnknownField Reason = "UnknownField"
	// ReasonDuplicateKey: a JSON object names a key twice.
	ReasonDuplicateKey Reason = "DuplicateKey"
	// ReasonWireMismatch: a bootstrap answer of one wire where the other was
	// expected, or one that mixes both (v1's item lengths beside a contract).
	ReasonWireMismatch Reason = "WireMismatch"
	// ReasonContractUnusable: the decode contract parses, but the engine
	// could not select or bound a manifest's blocks with it (a group spec
	// without a plan group, a sliding window without its size).
	ReasonContractUnusable Reason = "ContractUnusable"

	// ReasonManifestPrefixNotBeforePrompt: prefix_len >= prompt_len.
	ReasonManifestPrefixNotBeforePrompt Reason = "ManifestPrefixNotBeforePrompt"
	// ReasonManifestGroupOrder: the manifest's groups are not the decode
	// contract's group specs, in order.
	ReasonManifestGroupOrder Reason = "ManifestGroupOrder"
	// ReasonManifestPrefixUnaligned: prefix_len is not a multiple of the
	// contract's prefix_granularity.
	ReasonManifestPrefixUnaligned Reason = "ManifestPrefixUnaligned"
	// ReasonManifestBlockCount: a group carries a number of blocks other
	// than its transfer policy selects for prefix_len and prompt_len.
	ReasonManifestBlockCount Reason = "ManifestBlockCount"
	// ReasonManifestBlockOutsideArena: a block id is 0 (the null page) or not
	// below the group's page_count in the decode arena.
	ReasonManifestBlockOutsideArena Reason = "ManifestBlockOutsideArena"
)

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
	"errors"
	"fmt"
)

// Reason is a stable code for why plans could not be published or loaded.
type Reason string

const (
	// ReasonInvalidName: the PDPair name cannot name the ConfigMaps.
	ReasonInvalidName Reason = "InvalidName"
	// ReasonRankTooLarge: one rank's compressed plan alone exceeds the object budget.
	ReasonRankTooLarge Reason = "RankTooLarge"
	// ReasonPlanTooLarge: the plans are past the plan budget (too many
	// fragments, too many bytes, or more shard ConfigMaps than
	// MaxShardConfigMaps); nothing was encoded or loaded.
	ReasonPlanTooLarge Reason = "PlanTooLarge"
	// ReasonIndexTooLarge: the index alone exceeds the object budget.
	ReasonIndexTooLarge Reason = "IndexTooLarge"
	// ReasonMissingIndex: no index.json where the plans should be.
	ReasonMissingIndex Reason = "MissingIndex"
	// ReasonMalformedIndex: index.json is not a consistent index.
	ReasonMalformedIndex Reason = "MalformedIndex"
	// ReasonUnsupportedVersion: the index has a format version this package does not read.
	ReasonUnsupportedVersion Reason = "UnsupportedVersion"
	// ReasonRankOutOfRange: the requested decode TP rank is not in the index.
	ReasonRankOutOfRange Reason = "RankOutOfRange"
	// ReasonMissingShard: a shard ConfigMap or key named by the index is absent.
	ReasonMissingShard Reason = "MissingShard"
	// ReasonCorruptPlan: a rank's bytes do not decompress or decode.
	ReasonCorruptPlan Reason = "CorruptPlan"
	// ReasonHashMismatch: a rank's bytes differ from what the index recorded.
	ReasonHashMismatch Reason = "HashMismatch"
	// ReasonMissingSeal: the loader was given a seal location holding none.
	ReasonMissingSeal Reason = "MissingSeal"
	// ReasonMalformedSeal: the seal is not a consistent seal.
	ReasonMalformedSeal Reason = "MalformedSeal"
	// ReasonSealMismatch: the index is not the one the operator sealed: a
	// ConfigMap it did not write shadows or replaces its index, or the new
	// index or seal has not reached the pod yet.
	ReasonSealMismatch Reason = "SealMismatch"
	// ReasonMissingSignature: no index.sig beside the index.
	ReasonMissingSignature Reason = "MissingSignature"
	// ReasonMalformedSignature: index.sig is not a consistent signature.
	ReasonMalformedSignature Reason = "MalformedSignature"
	// ReasonBadSignature: index.sig is not the operator's, or not for this
	// pair: a tenant wrote it, or it was copied from another pair.
	ReasonBadSignature Reason = "BadSignature"
	// ReasonStaleGeneration: the signed index is of a generation older than
	// the plans the agent holds (a replay of an older publication).
	ReasonStaleGeneration Reason = "StaleGeneration"
	// ReasonNotPublished: the seal says the operator publishes nothing for
	// the pair's current generation.
	ReasonNotPublished Reason = "NotPublished"
)

// FormatError says why plans could not be published or loaded.
type FormatError struct {
	Reason Reason
	// Message names the object or key and the numbers involved.
	Message string
}

func (e *FormatError) Error() string { return "planstore: " + string(e.Reason) + ": " + e.Message }

func formatErrorf(reason Reason, format string, args ...any) *FormatError {
	return &FormatError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ReasonOf is err's reason when it is (or wraps) a *FormatError, else "".
func ReasonOf(err error) Reason {
	var fe *FormatError
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return ""
}

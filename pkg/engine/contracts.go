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

package engine

import (
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// ContractReader returns the wire bytes of one role's contract ("prefill"
// or "decode") and where they came from, for the status. src is the spec's
// source, nil when the spec leaves the role's contract to the live engines
// (the operator reads those; offline they cannot be read). A contract that
// cannot be had is a *transferplan.LayoutError (ReasonContractUnavailable
// errors are the caller's); any other error is the caller's to retry.
type ContractReader func(role string, src *pdv1.CacheContractSource) (raw []byte, source string, err error)

// ReasonContractUnavailable: a contract's ConfigMap or key does not exist,
// or an offline reader cannot follow a reference. It is the reader's, not
// an engine's, so it is declared here.
const ReasonContractUnavailable transferplan.Reason = "ContractUnavailable"

// Contracts are both roles' contracts as an engine read and decoded them.
type Contracts interface {
	// Roles are the prefill's and the decode's contracts, in that order; a
	// role not read (the spec was refused first) is the zero ContractRole.
	Roles() [2]ContractRole
}

// ContractRole is one role's contract as read.
type ContractRole struct {
	// Raw are the bytes read; nil when none were.
	Raw []byte
	// Source says where they came from.
	Source string
	// SHA256 identifies the decoded contract; empty when it was not
	// decoded.
	SHA256 string
	// Holds says what the decoded contract holds, for people (tokenspeed:
	// "groups kv, state, 3 fields"); empty when it was not decoded.
	Holds string
}

// ReadInline is the reader of offline judging: inline contracts only.
func ReadInline(role string, src *pdv1.CacheContractSource) ([]byte, string, error) {
	if src == nil {
		return nil, "", invalid("cacheContracts."+role,
			"save the live contract to a file with `pdtopo contract` and give it inline, or plan the PDPair in the cluster (pdtopo plan NAME)",
			"the spec leaves the %s's contract to the live engines, which only the operator reads", role)
	}
	if src.ConfigMapKeyRef != nil {
		field := "cacheContracts." + role + ".configMapKeyRef"
		return nil, "", invalid(field, "give the contract inline to plan offline, or plan the PDPair in the cluster (pdtopo plan NAME)",
			"ConfigMap %q key %q can only be read in the cluster", src.ConfigMapKeyRef.Name, src.ConfigMapKeyRef.Key)
	}
	return []byte(src.Inline), "spec.cacheContracts." + role + ".inline", nil
}

// DecodeContractFromAgents reports whether a pair whose engine reads
// contracts leaves the decode contract to the decode engines, which give
// it to their agents when they register: their pods must run before the
// pair has a verdict.
func DecodeContractFromAgents(e Engine, spec pdv1.PDPairSpec) bool {
	return e.ReadsContracts(spec) && (spec.CacheContracts == nil || spec.CacheContracts.Decode == nil)
}

// invalid is an InvalidLayout refusal of field, ending with its fix.
func invalid(field, fix, format string, args ...any) error {
	return (&transferplan.LayoutError{
		Reason:  transferplan.ReasonInvalidLayout,
		Field:   field,
		Message: field + ": " + fmt.Sprintf(format, args...),
	}).WithFix(fix)
}

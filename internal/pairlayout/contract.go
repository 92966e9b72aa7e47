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

package pairlayout

import (
	"errors"
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// IsContractPair reports whether the spec names the cache-contract wire.
func IsContractPair(spec pdv1.PDPairSpec) bool {
	return spec.WireOrDefault() == pdv1.WireCacheContract
}

// ContractReader returns the wire bytes of one role's contract ("prefill"
// or "decode") and where they came from, for the status. src is the spec's
// source, nil when the spec leaves the role's contract to the live engines
// (the operator reads those; offline they cannot be read). A contract that
// cannot be had is a *transferplan.LayoutError (ReasonContractUnavailable
// errors are the caller's); any other error is the caller's to retry.
type ContractReader func(role string, src *pdv1.CacheContractSource) (raw []byte, source string, err error)

// ReasonContractUnavailable: a contract's ConfigMap or key does not exist,
// or an offline reader cannot follow a reference. It is the reader's, not
// the planner's, so it is declared here.
const ReasonContractUnavailable transferplan.Reason = "ContractUnavailable"

// ReadInline is the reader of offline planning: inline contracts only.
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

// ContractRole is one role's contract as read: its bytes, where they came
// from and the decoded contract.
type ContractRole struct {
	Raw      []byte
	Source   string
	Contract *plancontract.CacheContract
}

// ContractPairFromSpec checks a contract pair's spec as the CRD would (the
// spec may come from a file), reads both contracts with read (a role the
// spec leaves out with a nil source) and decodes them as the engine does. A contract the engine would refuse is a
// *transferplan.LayoutError with its reason and the field
// cacheContracts.<role>.
func ContractPairFromSpec(spec pdv1.PDPairSpec, read ContractReader) (plancontract.Pair, [2]ContractRole, error) {
	var roles [2]ContractRole
	pair := plancontract.Pair{Prefill: parallelism(spec.Prefill), Decode: parallelism(spec.Decode)}
	if err := pair.Prefill.Validate("prefill"); err != nil {
		return pair, roles, err
	}
	if err := pair.Decode.Validate("decode"); err != nil {
		return pair, roles, err
	}
	var given pdv1.CacheContracts
	if spec.CacheContracts != nil {
		given = *spec.CacheContracts
	}
	for i, r := range []struct {
		role string
		src  *pdv1.CacheContractSource
	}{{"prefill", given.Prefill}, {"decode", given.Decode}} {
		field := "cacheContracts." + r.role
		if r.src != nil && (r.src.Inline != "") == (r.src.ConfigMapKeyRef != nil) {
			return pair, roles, invalid(field, "give exactly one of inline and configMapKeyRef", "gives %s", sourcesGiven(r.src))
		}
		raw, source, err := read(r.role, r.src)
		if err != nil {
			return pair, roles, err
		}
		c, err := plancontract.Parse(raw)
		if err != nil {
			return pair, roles, inRole(err, field, source)
		}
		roles[i] = ContractRole{Raw: raw, Source: source, Contract: c}
	}
	pair.PrefillContract, pair.DecodeContract = roles[0].Contract, roles[1].Contract
	return pair, roles, nil
}

func sourcesGiven(src *pdv1.CacheContractSource) string {
	if src.Inline == "" && src.ConfigMapKeyRef == nil {
		return "neither"
	}
	return "both"
}

// inRole places a decoding refusal in its role's field and names the source.
func inRole(err error, field, source string) error {
	var le *transferplan.LayoutError
	if !errors.As(err, &le) {
		return err
	}
	out := *le
	out.Field = field
	if le.Field != "" {
		out.Field += " " + le.Field
	}
	out.Message = fmt.Sprintf("%s (%s): %s", field, source, le.Message)
	return &out
}

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

package tokenspeed

import (
	"errors"
	"fmt"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

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
func ContractPairFromSpec(spec pdv1.PDPairSpec, read engine.ContractReader) (plancontract.Pair, [2]ContractRole, error) {
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

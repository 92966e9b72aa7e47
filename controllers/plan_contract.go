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

package controllers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// planContractPair plans a pair whose engine judges it from its contracts:
// the contracts as read (or why they cannot be used), then the steps every
// pair shares (planWithinBudget), under the same budget and planning gate
// as other pairs.
func planContractPair(pair *pdv1.PDPair, eng engine.Engine, out *planOutcome, in *contractInputs, budget transferplan.Budget, gate planGate) (*planOutcome, error) {
	out.contracts, out.contractsFingerprint = in.status(metav1.Now()), in.fingerprint
	if in.pending != "" {
		out.pending = true
		out.layoutReason, out.layoutMessage = pdv1.ReasonContractPending, in.pending
		return out, nil
	}
	if in.refusal != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(in.refusal)
		return out, nil
	}
	p, err := eng.Resolve(pair.Spec, engine.Inputs{Contracts: in.contracts})
	if err != nil {
		out.layoutReason, out.layoutMessage = explainLayoutError(err)
		return out, nil
	}
	return planWithinBudget(pair.Name, out, p, budget, gate)
}

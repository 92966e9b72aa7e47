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

package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/engine/engines"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// PDPairValidatorPath is where the manager's webhook server serves the
// PDPair validator.
const PDPairValidatorPath = "/validate-pd-pdtopo-dev-v1alpha1-pdpair"

// The status conditions are the primary answer about a PDPair; refusing it
// at apply time is opt-in. The configuration sends every PDPair write, with
// failurePolicy Ignore so that a manager outage never blocks them, and the
// handler admits everything unless the manager runs with --validate-pdpairs
// or the namespace carries pd.pdtopo.dev/pdpair-validation=enforce.
// +kubebuilder:webhook:path=/validate-pd-pdtopo-dev-v1alpha1-pdpair,mutating=false,failurePolicy=ignore,sideEffects=None,groups=pd.pdtopo.dev,resources=pdpairs,verbs=create;update,versions=v1alpha1,name=pdpair-layout.pd.pdtopo.dev,admissionReviewVersions=v1,timeoutSeconds=5
// +kubebuilder:webhookconfiguration:mutating=false,name=validating-webhook-configuration

// The validator reads the namespace's opt-in label.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// PDPairValidation is how the validator is switched on.
type PDPairValidation struct {
	// Everywhere refuses incompatible and over-budget PDPairs in every
	// namespace (--validate-pdpairs); otherwise only in namespaces labelled
	// pd.pdtopo.dev/pdpair-validation=enforce.
	Everywhere bool
	// Budget is the manager's plan budget (--max-plan-fragments, …).
	Budget transferplan.Budget
}

// PDPairValidator refuses PDPairs whose layouts are incompatible or whose
// plans are past the budget, with the planner's reason and field.
type PDPairValidator struct {
	// Namespaces reads a namespace's labels and a model-aware pair's
	// ConfigMap (uncached: one read per write).
	Namespaces client.Reader
	Decoder    admission.Decoder
	PDPairValidation
}

// RegisterPDPairValidator serves the validator on the manager's webhook
// server; a zero Budget means the default one.
func RegisterPDPairValidator(mgr ctrl.Manager, v PDPairValidation) error {
	if v.Budget == (transferplan.Budget{}) {
		v.Budget = transferplan.DefaultBudget
	}
	mgr.GetWebhookServer().Register(PDPairValidatorPath, &webhook.Admission{Handler: &PDPairValidator{
		Namespaces:       mgr.GetAPIReader(),
		Decoder:          admission.NewDecoder(mgr.GetScheme()),
		PDPairValidation: v,
	}})
	return nil
}

// Handle refuses a created or changed spec that the planner rejects or the
// budget refuses, where validation is on; it admits everything else.
func (v *PDPairValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	var pair pdv1.PDPair
	if err := v.Decoder.Decode(req, &pair); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Operation == admissionv1.Update {
		var old pdv1.PDPair
		if err := v.Decoder.DecodeRaw(req.OldObject, &old); err == nil && equality.Semantic.DeepEqual(old.Spec, pair.Spec) {
			return admission.Allowed("the spec is unchanged")
		}
	}
	on, err := v.enforcedIn(ctx, req.Namespace)
	if err != nil {
		// Not knowing whether to enforce is not a reason to refuse: the
		// status conditions will say what is wrong.
		return admission.Allowed(fmt.Sprintf("validation not checked: reading namespace %s: %v", req.Namespace, err))
	}
	if !on {
		return admission.Allowed("")
	}
	eng := engines.For(pair.Spec)
	if eng.ReadsContracts(pair.Spec) {
		return v.validateContractPair(eng, &pair)
	}
	config, why := v.modelConfig(ctx, &pair)
	if why != "" {
		// The ConfigMap may be applied after the pair; the status will say
		// what is missing, and the operator reads it again.
		return admission.Allowed("the model config was not checked: " + why)
	}
	return v.validate(eng, &pair, config)
}

// modelConfig reads the config.json a model-aware pair's
// spec.model.configMapKeyRef names (nil for other pairs), or says why not.
// The validator's reader is the manager's API reader, which may read
// ConfigMaps.
func (v *PDPairValidator) modelConfig(ctx context.Context, pair *pdv1.PDPair) ([]byte, string) {
	if pair.Spec.Model == nil || pair.Spec.Model.ConfigMapKeyRef == nil {
		return nil, ""
	}
	ref := pair.Spec.Model.ConfigMapKeyRef
	var cm corev1.ConfigMap
	if err := v.Namespaces.Get(ctx, client.ObjectKey{Namespace: pair.Namespace, Name: ref.Name}, &cm); err != nil {
		return nil, fmt.Sprintf("reading ConfigMap %s/%s: %v", pair.Namespace, ref.Name, err)
	}
	if data, ok := cm.Data[ref.Key]; ok {
		return []byte(data), ""
	}
	if data, ok := cm.BinaryData[ref.Key]; ok {
		return data, ""
	}
	return nil, fmt.Sprintf("ConfigMap %s/%s has no key %q", pair.Namespace, ref.Name, ref.Key)
}

func (v *PDPairValidator) enforcedIn(ctx context.Context, namespace string) (bool, error) {
	if v.Everywhere {
		return true, nil
	}
	var ns corev1.Namespace
	if err := v.Namespaces.Get(ctx, client.ObjectKey{Name: namespace}, &ns); err != nil {
		return false, err
	}
	return ns.Labels[pdv1.LabelPDPairValidation] == pdv1.PDPairValidationEnforce, nil
}

// validate runs what the controller runs before planning: the layout and
// the plan budget, both without building a plan.
func (v *PDPairValidator) validate(eng engine.Engine, pair *pdv1.PDPair, modelConfig []byte) admission.Response {
	p, err := eng.Resolve(pair.Spec, engine.Inputs{ModelConfig: modelConfig})
	if err == nil {
		_, err = p.Size(v.Budget)
	}
	var le *transferplan.LayoutError
	var be *transferplan.BudgetError
	switch {
	case err == nil:
		return admission.Allowed("the layouts are compatible and the plans within the budget")
	case errors.As(err, &le):
		return denied(string(le.Reason), "spec."+fieldOr(le.Field, "kvBuffers"),
			fmt.Sprintf("PDPair %s: %s: %s", pair.Name, le.Reason, le.Message))
	case errors.As(err, &be):
		return denied(string(pdv1.ReasonPlanTooLarge), "spec",
			fmt.Sprintf("PDPair %s: %s: %s", pair.Name, pdv1.ReasonPlanTooLarge, planbudget.Explain(be, "the manager's")))
	default:
		return denied(string(pdv1.ReasonPlanningFailed), "spec", fmt.Sprintf("PDPair %s: %v", pair.Name, err))
	}
}

// validateContractPair checks a pair its engine judges from contracts as
// the controller does before planning: both contracts, the engine's checks
// and the plan budget. Contracts in ConfigMaps or left to the live engines
// are the operator's, which reads and follows them.
func (v *PDPairValidator) validateContractPair(eng engine.Engine, pair *pdv1.PDPair) admission.Response {
	if contractsReadByTheOperator(pair.Spec) {
		return admission.Allowed("the contracts are read from ConfigMaps or the live engines by the operator; LayoutCompatible gives its verdict")
	}
	p, err := eng.Resolve(pair.Spec, engine.Inputs{}) // the inline contracts, read offline
	if err == nil {
		_, err = p.Size(v.Budget)
	}
	var le *transferplan.LayoutError
	var be *transferplan.BudgetError
	switch {
	case err == nil:
		return admission.Allowed("the contracts are compatible and the plans within the budget")
	case errors.As(err, &le):
		return denied(string(le.Reason), "spec."+contractField(le.Field), fmt.Sprintf("PDPair %s: %s: %s", pair.Name, le.Reason, le.Message))
	case errors.As(err, &be):
		return denied(string(pdv1.ReasonPlanTooLarge), "spec",
			fmt.Sprintf("PDPair %s: %s: %s", pair.Name, pdv1.ReasonPlanTooLarge, planbudget.Explain(be, "the manager's")))
	default:
		return denied(string(pdv1.ReasonPlanningFailed), "spec", fmt.Sprintf("PDPair %s: %v", pair.Name, err))
	}
}

// contractField is the spec path of a contract refusal's field: paths
// inside the contracts are under cacheContracts.
func contractField(field string) string {
	field, _, _ = strings.Cut(field, " ")
	for _, top := range []string{"cacheContracts", "prefill.", "decode."} {
		if strings.HasPrefix(field, top) {
			return field
		}
	}
	return "cacheContracts"
}

// contractsReadByTheOperator: a contract is in a ConfigMap, or left to the
// live engines; only the operator reads those.
func contractsReadByTheOperator(spec pdv1.PDPairSpec) bool {
	c := spec.CacheContracts
	return c == nil || c.Prefill == nil || c.Decode == nil || c.Prefill.ConfigMapKeyRef != nil || c.Decode.ConfigMapKeyRef != nil
}

func fieldOr(field, fallback string) string {
	if field == "" {
		return fallback
	}
	return field
}

// denied refuses with the reason as the status reason and the field as its
// cause, so `kubectl apply` prints both.
func denied(reason, field, message string) admission.Response {
	resp := admission.Denied(message)
	resp.Result.Reason = metav1.StatusReason(reason)
	resp.Result.Details = &metav1.StatusDetails{Causes: []metav1.StatusCause{{
		Type: metav1.CauseTypeFieldValueInvalid, Field: field, Message: message,
	}}}
	return resp
}

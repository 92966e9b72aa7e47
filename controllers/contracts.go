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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// DefaultContractRefreshInterval is how soon a pair whose contracts are in
// ConfigMaps reads them again. The manager's cache holds only plan
// ConfigMaps, so contract ConfigMaps are read through the API server on
// every reconcile and followed by this period; a change re-plans the pair.
const DefaultContractRefreshInterval = 30 * time.Second

// contractInputs is what a contract pair's verdict is made from.
type contractInputs struct {
	// contracts are both roles' contracts as the pair's engine read them
	// (nil while one is pending).
	contracts engine.Contracts
	// sources say where each role's contract comes from, as the status
	// reports it (SHA256 and a Spec source's observedAt are filled in when
	// the pair is planned).
	sources [2]pdv1.ContractSourceStatus
	// refusal is set when the spec or a contract cannot be used (a
	// *transferplan.LayoutError); the pair is then incompatible.
	refusal error
	// pending is set while a contract the spec leaves to the live engines
	// has not been read: what is missing, and why.
	pending string
	// fingerprint identifies the contracts' bytes (and a refusal or what
	// is pending): with the generation, the key under which an outcome is
	// reused.
	fingerprint string
	// fromConfigMap: a contract is read from a ConfigMap, to be read again.
	fromConfigMap bool
	// live: a contract is read from the live engines, to be read again.
	live bool
}

var contractRoles = [2]string{"prefill", "decode"}

// readContracts reads a contract pair's contracts: inline, from their
// ConfigMaps in the pair's namespace, or as the live engines last gave
// them (liveContracts reads those in the background). Only failures to
// talk to the API server are errors; a missing ConfigMap or key, a
// contract the engine would refuse or one not read yet is the pair's
// verdict. It returns nil for a pair its engine judges without contracts.
func (r *PDPairReconciler) readContracts(ctx context.Context, pair *pdv1.PDPair) (*contractInputs, error) {
	eng := engineFor(pair)
	if !eng.ReadsContracts(pair.Spec) {
		return nil, nil
	}
	in := &contractInputs{}
	live := r.observeLiveContracts(pair, in)
	read := func(role string, src *pdv1.CacheContractSource) ([]byte, string, error) {
		i := slices.Index(contractRoles[:], role)
		if src == nil {
			return live[i].raw, live[i].from, live[i].check(pair)
		}
		if src.ConfigMapKeyRef == nil {
			from := "spec.cacheContracts." + role + ".inline"
			in.sources[i] = pdv1.ContractSourceStatus{Source: pdv1.ContractSourceSpec, From: from}
			return []byte(src.Inline), from, nil
		}
		in.fromConfigMap = true
		raw, from, err := r.readContractConfigMap(ctx, pair.Namespace, role, *src.ConfigMapKeyRef)
		in.sources[i] = pdv1.ContractSourceStatus{Source: pdv1.ContractSourceSpec, From: from}
		return raw, from, err
	}
	if in.pending == "" {
		var err error
		in.contracts, err = eng.ReadContracts(pair.Spec, read)
		var le *transferplan.LayoutError
		switch {
		case errors.As(err, &le):
			in.refusal = err
		case err != nil:
			return nil, err
		}
	}
	h := sha256.New()
	for _, role := range in.roles() {
		fmt.Fprintf(h, "%d:", len(role.Raw))
		h.Write(role.Raw)
	}
	if in.refusal != nil {
		h.Write([]byte(in.refusal.Error()))
	}
	h.Write([]byte(in.pending))
	in.fingerprint = hex.EncodeToString(h.Sum(nil))
	return in, nil
}

func (r *PDPairReconciler) readContractConfigMap(ctx context.Context, namespace, role string, ref pdv1.ConfigMapKeyReference) ([]byte, string, error) {
	field := "cacheContracts." + role + ".configMapKeyRef"
	var cm corev1.ConfigMap
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: ref.Name}, &cm)
	if apierrors.IsNotFound(err) {
		return nil, "", unavailable(field, fmt.Sprintf("create ConfigMap %s with key %s holding the %s's contract", ref.Name, ref.Key, role),
			"ConfigMap %q does not exist in namespace %q", ref.Name, namespace)
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading ConfigMap %s/%s: %w", namespace, ref.Name, err)
	}
	source := fmt.Sprintf("ConfigMap %s key %s (resourceVersion %s)", ref.Name, ref.Key, cm.ResourceVersion)
	if v, ok := cm.Data[ref.Key]; ok {
		return []byte(v), source, nil
	}
	if v, ok := cm.BinaryData[ref.Key]; ok {
		return v, source, nil
	}
	keys := make([]string, 0, len(cm.Data)+len(cm.BinaryData))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	for k := range cm.BinaryData {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return nil, "", unavailable(field, fmt.Sprintf("put the %s's contract under key %s, or name one of the keys it has", role, ref.Key),
		"ConfigMap %q has no key %q (its keys: %v)", ref.Name, ref.Key, keys)
}

func unavailable(field, fix, format string, args ...any) error {
	return (&transferplan.LayoutError{
		Reason: engine.ReasonContractUnavailable, Field: field,
		Message: field + ": " + fmt.Sprintf(format, args...),
	}).WithFix(fix)
}

// status says where the contracts came from; t is when spec contracts
// were read.
func (in *contractInputs) status(t metav1.Time) *pdv1.ContractsStatus {
	s := &pdv1.ContractsStatus{Prefill: in.sources[0], Decode: in.sources[1]}
	roles := in.roles()
	for i, dst := range []*pdv1.ContractSourceStatus{&s.Prefill, &s.Decode} {
		role := roles[i]
		if role.Raw != nil {
			dst.Bytes = int64(len(role.Raw))
		}
		dst.SHA256 = role.SHA256
		if dst.Source == pdv1.ContractSourceSpec && role.Raw != nil {
			dst.ObservedAt = &t
		}
		if dst.Source == "" { // a spec contract not read: the spec was refused, or a live one is awaited
			dst.Source = pdv1.ContractSourceSpec
			why := "it is read once the live contracts are"
			if in.refusal != nil {
				why = in.refusal.Error()
			}
			dst.Message = truncate("not read: "+why, maxContractMessage)
		}
		dst.From = truncate(dst.From, maxContractFrom)
	}
	return s
}

// roles are the contracts as read, zero while one is pending.
func (in *contractInputs) roles() [2]engine.ContractRole {
	if in.contracts == nil {
		return [2]engine.ContractRole{}
	}
	return in.contracts.Roles()
}

// statusOf is status.contracts for this reconcile: what out was planned
// from, with the live sources' current messages (a refresh that failed
// after the contract was planned says so without re-planning). Nil for a
// pair on the V1 wire.
func (in *contractInputs) statusOf(out *planOutcome) *pdv1.ContractsStatus {
	if in == nil || out.contracts == nil {
		return nil
	}
	s := out.contracts.DeepCopy()
	for i, dst := range []*pdv1.ContractSourceStatus{&s.Prefill, &s.Decode} {
		if dst.Source != pdv1.ContractSourceSpec {
			dst.Message = in.sources[i].Message
		}
	}
	return s
}

// The API's limits on status.contracts.<role>.{message,from}.
const (
	maxContractMessage = 4096
	maxContractFrom    = 1024
)

// describeLiveFailure is a live source's message in the status.
func describeLiveFailure(s liveState) string {
	switch {
	case s.good == nil && s.failure == nil:
		return "not read yet: the first read is in flight"
	case s.good == nil:
		return truncate("not read yet: "+s.failure.Error(), maxContractMessage)
	case s.failure != nil:
		return truncate(fmt.Sprintf("the last read failed; the verdict keeps the contract read at %s: %s",
			s.good.since.UTC().Format(time.RFC3339), s.failure.Error()), maxContractMessage)
	}
	return ""
}

// live contract sources, as a reconcile sees them

// liveRole is one role's live source as the reconcile read it: the bytes
// the last good read gave (nil when none), and a refusal of them.
type liveRole struct {
	raw  []byte
	from string
	// check refuses what the source gave for this pair (nil: no refusal).
	check func(pair *pdv1.PDPair) error
}

// observeLiveContracts looks at the live sources of the roles the spec
// leaves out, fills their status and sets in.pending when one has given
// no contract yet (naming each missing one).
func (r *PDPairReconciler) observeLiveContracts(pair *pdv1.PDPair, in *contractInputs) [2]liveRole {
	var out [2]liveRole
	var given pdv1.CacheContracts
	if pair.Spec.CacheContracts != nil {
		given = *pair.Spec.CacheContracts
	}
	var missing []string
	for i, src := range []*pdv1.CacheContractSource{given.Prefill, given.Decode} {
		if src != nil {
			continue
		}
		in.live = true
		role := contractRoles[i]
		kind, target, read := r.liveSource(pair, role)
		if read == nil { // no bootstrap address: a spec the CRD would refuse (read from a file)
			out[i].check = func(*pdv1.PDPair) error {
				return (&transferplan.LayoutError{Reason: transferplan.ReasonInvalidLayout, Field: "prefill.bootstrapAddress",
					Message: "prefill.bootstrapAddress: wire CacheContract without cacheContracts.prefill reads the prefill's contract from its bootstrap server, and none is given"}).
					WithFix("give spec.prefill.bootstrapAddress, or spec.cacheContracts.prefill")
			}
			in.sources[i] = pdv1.ContractSourceStatus{Source: kind}
			continue
		}
		st := r.live.observe(pair, role, target, read)
		in.sources[i] = pdv1.ContractSourceStatus{Source: kind, From: target, Message: describeLiveFailure(st)}
		if refusal := refuseNotAllowed(target, st); refusal != nil {
			out[i].check = func(*pdv1.PDPair) error { return refusal }
			continue
		}
		if st.good == nil {
			missing = append(missing, fmt.Sprintf("the %s's contract (%s) is %s", role, kind, in.sources[i].Message))
			continue
		}
		good := st.good
		since := metav1.NewTime(good.since)
		in.sources[i].From, in.sources[i].ObservedAt = good.from, &since
		out[i] = liveRole{raw: good.raw(), from: good.from, check: func(p *pdv1.PDPair) error { return checkLive(p, kind, good) }}
	}
	if len(missing) > 0 {
		in.pending = "waiting for the live engines: " + strings.Join(missing, "; ")
	}
	return out
}

// liveSource is where a role's live contract is read: the prefill's
// bootstrap server, or the decode agents.
func (r *PDPairReconciler) liveSource(pair *pdv1.PDPair, role string) (pdv1.ContractSource, string, liveReader) {
	if role == "decode" {
		return pdv1.ContractSourceAgentRegistration, "the agents of the pair's decode pods", r.readDecode(pair)
	}
	addr := pair.Spec.Prefill.BootstrapAddress
	if addr == "" {
		return pdv1.ContractSourcePrefillBootstrap, "", nil
	}
	return pdv1.ContractSourcePrefillBootstrap, addr, readPrefill(r.live.bootstrap, addr)
}

// checkLiveParallelism refuses a bootstrap server that reports another TP
// or DP size than the spec's prefill: plans for the spec's sizes would
// name ranks the prefill does not have.
func checkLiveParallelism(pair *pdv1.PDPair, kind pdv1.ContractSource, good *liveRead) error {
	if kind != pdv1.ContractSourcePrefillBootstrap {
		return nil
	}
	tp, dp := int(pair.Spec.Prefill.TensorParallelSize), 1
	if pair.Spec.Prefill.DataParallelSize != nil {
		dp = int(*pair.Spec.Prefill.DataParallelSize)
	}
	if good.tpSize == tp && good.dpSize == dp {
		return nil
	}
	return (&transferplan.LayoutError{
		Reason: transferplan.Reason(pdv1.ReasonContractParallelismMismatch), Field: "prefill.tensorParallelSize",
		Message: fmt.Sprintf("the prefill's bootstrap server (%s) reports TP %d, DP %d; spec.prefill says TP %d, DP %d", good.from, good.tpSize, good.dpSize, tp, dp),
	}).WithFix(fmt.Sprintf("set spec.prefill.tensorParallelSize: %d and dataParallelSize: %d, or point bootstrapAddress at the prefill the spec describes", good.tpSize, good.dpSize))
}

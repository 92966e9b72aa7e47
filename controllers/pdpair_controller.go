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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"
	"sigs.k8s.io/controller-runtime/pkg/source"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// ControllerName names the controller in logs, metrics and events.
const ControllerName = "pdpair"

// PDPairReconciler proves a PDPair's two layouts compatible (or says why not),
// publishes every decode rank's route plan in ConfigMaps the PDPair owns, and
// reports both in the PDPair's status.
type PDPairReconciler struct {
	client.Client
	// APIReader reads around the cache, which holds only plan ConfigMaps.
	APIReader client.Reader
	Scheme    *runtime.Scheme
	Recorder  recorder.EventRecorder
	// MaxConcurrentReconciles is how many PDPairs are reconciled at once (default 1).
	MaxConcurrentReconciles int
	// Budget bounds the plans of one PDPair; a PDPair past it is refused
	// with PlanTooLarge before anything is planned.
	Budget transferplan.Budget

	// MaxPlanMemoryBytes bounds the estimated memory of the plannings in
	// flight (planMemory): large pairs wait for each other instead of adding
	// up past the manager's memory limit. 0 leaves planning unbounded.
	MaxPlanMemoryBytes int64

	// ContractRefreshInterval is how soon a contract pair whose contracts are
	// in ConfigMaps reads them again (default 30s).
	ContractRefreshInterval time.Duration

	// LiveContractRefreshInterval is how often a contract read from a live
	// engine (a pair without it in spec.cacheContracts) is read again
	// (default DefaultLiveContractRefresh); LiveContractRetryInterval how
	// soon a live source that gave none is asked again (default
	// DefaultLiveContractRetry).
	LiveContractRefreshInterval time.Duration
	LiveContractRetryInterval   time.Duration

	// BootstrapAddressPolicy, when not empty, is where the prefills'
	// bootstrap servers may be read (--bootstrap-address-allowlist); a pair
	// naming another address is refused with BootstrapAddressNotAllowed.
	BootstrapAddressPolicy *livecontract.AddressPolicy

	// FleetRecheckInterval is how soon a pair whose decode agents lag is
	// looked at again: an agent picking up a new plan changes nothing the
	// operator watches (default 10s).
	FleetRecheckInterval time.Duration

	// ModelRecheckInterval is how often a pair whose model config is in a
	// ConfigMap reads it again (default DefaultModelRecheckInterval).
	ModelRecheckInterval time.Duration

	// Clock, when set, is the reconciler's time for status.generations
	// (lastUsed and the grace before an unused generation is dropped);
	// tests set it, the manager leaves it nil (time.Now).
	Clock func() time.Time

	// ForeignScanInterval is how often every namespace holding PDPairs is
	// scanned for ConfigMaps of someone else's under plan names (default
	// DefaultForeignScanInterval; see foreign.go).
	ForeignScanInterval time.Duration

	// Signer signs each published index for its pair (sign.go); nil
	// publishes unsigned indexes.
	Signer *planstore.Signer

	plans   *planCache
	gauge   *compatibilityGauge
	prober  *agentProber
	fleet   *fleetProbes
	live    *liveContracts
	written *writtenStatuses
	foreign *foreignReports
	looks   *foreignLooks
	// verified says which plan ConfigMaps hold the data the manager knows.
	verified *verifiedConfigMaps

	// rollouts are the last RolloutCompatible verdicts (generations_judge.go).
	rollouts *rolloutJudgements
}

// NewPDPairReconciler wires a reconciler to a manager's client, cache and recorder.
func NewPDPairReconciler(mgr ctrl.Manager) *PDPairReconciler {
	r := &PDPairReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Scheme:    mgr.GetScheme(),
		Recorder:  mgr.GetEventRecorder(ControllerName),
		Budget:    transferplan.DefaultBudget,
		// The default admits the largest pair of the default budget alone
		// with room, and several ordinary ones beside it.
		MaxPlanMemoryBytes: DefaultMaxPlanMemoryBytes,
		plans:              newPlanCache(),
		written:            newWrittenStatuses(),
		foreign:            newForeignReports(),
		looks:              newForeignLooks(),
		verified:           newVerifiedConfigMaps(),
		gauge:              newCompatibilityGauge(),
		live:               newLiveContracts(),
		rollouts:           newRolloutJudgements(),
	}
	r.prober = newAgentProber()
	r.fleet = newFleetProbes(r.prober)
	return r
}

// +kubebuilder:rbac:groups=pd.pdtopo.dev,resources=pdpairs,verbs=get;list;watch
// +kubebuilder:rbac:groups=pd.pdtopo.dev,resources=pdpairs/status,verbs=get;update;patch
// Owner references with blockOwnerDeletion need update on pdpairs/finalizers
// where the OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=pd.pdtopo.dev,resources=pdpairs/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// Leader election (leases, core events) is a namespaced Role: config/rbac/leader_election_role.yaml.

// Reconcile reads top to bottom: fetch (the pair, and a model-aware pair's
// config) → plan → publish → status.
func (r *PDPairReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pair, err := r.fetch(ctx, req.NamespacedName)
	if err != nil || pair == nil {
		return ctrl.Result{}, err
	}
	if !pair.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the garbage collector removes the owned ConfigMaps
	}
	model, err := r.fetchModelConfig(ctx, pair)
	if err != nil {
		return ctrl.Result{}, err
	}
	contracts, err := r.readContracts(ctx, pair)
	if err != nil {
		return ctrl.Result{}, err
	}
	outcome, err := r.plans.get(ctx, pair, model, r.Budget, contracts)
	if err != nil {
		return ctrl.Result{}, err
	}
	pub := r.publish(ctx, pair, outcome, model)
	if pub.wrote {
		publishedPlanBytes.Observe(float64(pub.bytes))
	}
	r.gauge.set(req.NamespacedName, outcome.compatible)
	fleet, fleetErr := r.observeFleet(ctx, pair, currentPlanHash(outcome, pub), pub.crosses)
	foreign := r.observeForeign(ctx, pair, pub.reason == pdv1.ReasonConfigMapConflict)
	livePrefill := r.observeLivePrefill(pair)
	gens := r.observeGenerations(pair, outcome, pub, fleetOrNil(fleet, fleetErr), model)
	observed := observations{fleet: fleetOrNil(fleet, fleetErr), foreign: foreign, contracts: contracts.statusOf(outcome), livePrefill: livePrefill, generations: gens}
	if err := r.applyStatus(ctx, pair, outcome, pub, observed); err != nil {
		return ctrl.Result{}, err
	}
	if pub.retry != nil {
		log.FromContext(ctx).Info("publishing plans failed; retrying", "error", pub.retry.Error())
		return ctrl.Result{RequeueAfter: pub.requeueAfter}, pub.retry
	}
	if fleetErr != nil {
		return ctrl.Result{}, fleetErr
	}
	requeue := minPositive(minPositive(pub.requeueAfter, r.fleetRecheck(fleet)), r.modelRecheck(pair))
	requeue = minPositive(requeue, minPositive(r.contractRefresh(contracts), gens.recheck))
	if livePrefill != nil {
		requeue = minPositive(requeue, livePrefill.requeue)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// contractRefresh is how soon contracts read from ConfigMaps are read
// again, and a pair with live contracts looked at again (a finished read
// also enqueues it); 0 when there are neither.
func (r *PDPairReconciler) contractRefresh(in *contractInputs) time.Duration {
	var after time.Duration
	if in != nil && in.fromConfigMap {
		after = DefaultContractRefreshInterval
		if r.ContractRefreshInterval > 0 {
			after = r.ContractRefreshInterval
		}
	}
	switch {
	case in == nil || !in.live:
	case in.pending != "":
		after = minPositive(after, r.live.retry)
	default:
		after = minPositive(after, r.live.refresh)
	}
	return after
}

// fetch returns the PDPair, or nil when it is gone (and forgets it).
func (r *PDPairReconciler) fetch(ctx context.Context, key types.NamespacedName) (*pdv1.PDPair, error) {
	var pair pdv1.PDPair
	err := r.Get(ctx, key, &pair)
	if apierrors.IsNotFound(err) {
		r.plans.forget(key)
		r.written.forget(key)
		r.foreign.forget(key)
		r.looks.forget(key)
		r.verified.forget(key)
		r.gauge.forget(key)
		r.live.forget(key)
		r.fleet.forget(key)
		r.rollouts.forget(key)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &pair, nil
}

// Builder is the controller's wiring without its reconciler, so tests can
// wrap the reconciler (to count calls) and keep the exact same watches.
func (r *PDPairReconciler) Builder(mgr ctrl.Manager) *builder.Builder {
	r.plans.memory = newPlanMemoryGate(r.MaxPlanMemoryBytes)
	r.live.kept.memory = r.plans.memory
	r.live.bootstrap = r.live.client.Restrict(r.BootstrapAddressPolicy)
	if r.LiveContractRefreshInterval > 0 {
		r.live.refresh = r.LiveContractRefreshInterval
	}
	if r.LiveContractRetryInterval > 0 {
		r.live.retry = r.LiveContractRetryInterval
	}
	scan := &foreignScan{r: r, interval: r.ForeignScanInterval, events: make(chan event.GenericEvent)}
	if scan.interval <= 0 {
		scan.interval = DefaultForeignScanInterval
	}
	if err := mgr.Add(scan); err != nil { // only fails once the manager has started
		log.Log.Error(err, "the scan for foreign plan ConfigMaps is not running")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentReconciles}).
		// Spec changes, and a status someone else changed; not the echoes of
		// the manager's own status writes (see statuswatch.go).
		For(&pdv1.PDPair{}, builder.WithPredicates(specOrForeignStatusChange{written: r.written})).
		// A published ConfigMap deleted or edited by someone else is
		// restored. Metadata only: no ConfigMap data is ever cached (cache.go).
		Owns(&corev1.ConfigMap{}, builder.OnlyMetadata, builder.WithPredicates(foreignConfigMapChange{verified: r.verified})).
		// A decode pod appearing, going, or its agent changing readiness
		// changes the pair's decode fleet status.
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(pairOfDecodePod), builder.WithPredicates(decodePodChange{})).
		// A ConfigMap of someone else's appearing or going under a plan name.
		WatchesRawSource(source.Channel(scan.events, &handler.EnqueueRequestForObject{})).
		// A live engine's contract read (or failing to be).
		WatchesRawSource(source.Channel(r.live.events, &handler.EnqueueRequestForObject{})).
		// A decode agent answering its probe differently.
		WatchesRawSource(source.Channel(r.fleet.events, &handler.EnqueueRequestForObject{}))
}

// SetupWithManager registers the controller.
func (r *PDPairReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return r.Builder(mgr).Complete(r)
}

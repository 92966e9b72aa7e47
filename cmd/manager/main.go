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

// Command manager runs the pdtopo operator: the PDPair controller, which
// validates prefill/decode layouts and publishes every decode rank's route
// plan in ConfigMaps, and (with --webhook-certs) the admission webhooks, which
// inject the receiver agent into decode pods.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/controllers"
	"github.com/pdtopo/pdtopo/internal/livecontract"
	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/internal/version"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/webhooks"
)

// options are the manager's flags.
type options struct {
	metricsAddr             string
	probeAddr               string
	leaderElect             bool
	leaderElectionID        string
	leaderElectionNamespace string
	concurrency             int
	kubeconfig              string
	agent                   agentOptions
	agentSidecar            webhooks.AgentSidecar
	webhook                 webhookOptions
	signing                 signingOptions
	metricsSecure           bool
	validatePDPairs         bool
	watchNamespaces         string
	budget                  transferplan.Budget
	planMemory              int64
	bootstrapAllowlist      string
	bootstrapPolicy         *livecontract.AddressPolicy
	zap                     zap.Options
}

func parseFlags(args []string) (options, error) {
	o := options{zap: zap.Options{Development: false}, budget: transferplan.DefaultBudget}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", `address of the Prometheus metrics endpoint ("0" disables it)`)
	fs.BoolVar(&o.metricsSecure, "metrics-secure", false,
		"serve metrics over HTTPS to callers the API server authenticates (TokenReview) and authorizes for GET /metrics "+
			"(SubjectAccessReview; config/rbac's metrics-reader ClusterRole grants it); config/manager sets it")
	fs.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz probes")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "hold a Lease so that only one replica reconciles")
	fs.StringVar(&o.leaderElectionID, "leader-election-id", "pdtopo-manager.pd.pdtopo.dev", "name of the leader election Lease")
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", "",
		"namespace of the Lease (default: the pod's namespace; required outside a cluster)")
	fs.IntVar(&o.concurrency, "max-concurrent-reconciles", 4,
		"PDPairs reconciled at once; planning is CPU-bound, publishing waits on the API server")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, then in-cluster, then ~/.kube/config)")
	o.agent.bindFlags(fs)
	o.webhook.bindFlags(fs)
	o.signing.bindFlags(fs)
	planbudget.BindFlags(fs, &o.budget)
	fs.StringVar(&o.watchNamespaces, "watch-namespaces", "",
		"comma-separated namespaces to reconcile PDPairs in (namespaced mode: only Roles in those namespaces are needed, "+
			"config/namespaced); default: every namespace")
	fs.BoolVar(&o.validatePDPairs, "validate-pdpairs", false,
		"refuse incompatible and over-budget PDPairs at apply time in every namespace (without it, only in namespaces labelled "+
			pdv1.LabelPDPairValidation+"="+pdv1.PDPairValidationEnforce+"); needs the webhook server (--webhook-certs)")
	fs.Int64Var(&o.planMemory, "max-plan-memory", controllers.DefaultMaxPlanMemoryBytes,
		"bytes of estimated memory the PDPair plannings under way may take together; larger ones wait (0: unbounded)")
	fs.StringVar(&o.bootstrapAllowlist, "bootstrap-address-allowlist", "",
		"comma-separated CIDRs, IPs and Services (NAMESPACE/NAME, or NAMESPACE/* for every Service of a namespace) that a contract "+
			"pair's spec.prefill.bootstrapAddress may name; a pair naming another is refused with BootstrapAddressNotAllowed and "+
			"nothing is sent to it (default: any address)")
	o.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.bootstrapPolicy, err = livecontract.ParseAddressPolicy(strings.Split(o.bootstrapAllowlist, ",")); err != nil {
		return o, fmt.Errorf("--bootstrap-address-allowlist: %w", err)
	}
	if err := planbudget.Validate(o.budget); err != nil {
		return o, err
	}
	if o.concurrency < 1 {
		return o, fmt.Errorf("--max-concurrent-reconciles must be at least 1, got %d", o.concurrency)
	}
	if o.webhook.certs != webhookCertsNone && o.agent.image == "" {
		return o, errors.New("--agent-image must name the receiver-agent image when webhooks are served")
	}
	if o.agentSidecar, err = o.agent.sidecar(); err != nil {
		return o, err
	}
	return o, o.webhook.validate()
}

func main() {
	if version.Handle("manager", os.Args[1:], os.Stdout) {
		return
	}
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&o.zap)))
	if err := run(o); err != nil {
		ctrl.Log.WithName("setup").Error(err, "manager stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	log := ctrl.Log.WithName("setup")
	applyMemoryLimit(log.Info)
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := pdv1.AddToScheme(scheme); err != nil {
		return err
	}
	if o.kubeconfig != "" {
		// controller-runtime reads $KUBECONFIG when its own flag (on the
		// global flag set, which this command does not parse) is empty.
		os.Setenv("KUBECONFIG", o.kubeconfig)
	}
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("finding the cluster: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   controllers.CacheOptions(o.namespaces()...),
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.probeAddr,
		WebhookServer:           webhook.NewServer(o.webhook.serverOptions()),
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        o.leaderElectionID,
		LeaderElectionNamespace: o.leaderElectionNamespace,
		// Stepping down quickly on shutdown lets a new leader start at once.
		LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	keys, err := o.signing.load(context.Background(), cfg)
	if err != nil {
		return err
	}
	r := controllers.NewPDPairReconciler(mgr)
	if keys != nil {
		r.Signer = keys.signer
		o.agentSidecar.PlanPublicKeys = keys.accepted
	} else {
		log.Info("no plan signing key (no --signing-key-secret or namespace): plan indexes are published unsigned")
	}
	r.MaxConcurrentReconciles = o.concurrency
	r.Budget = o.budget
	r.MaxPlanMemoryBytes = o.planMemory
	r.BootstrapAddressPolicy = o.bootstrapPolicy
	if err := r.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the PDPair controller: %w", err)
	}
	ctx, fail := context.WithCancelCause(ctrl.SetupSignalHandler())
	webhooksReady, err := setupWebhooks(mgr, o.webhook, func(mgr ctrl.Manager) error { return registerWebhooks(mgr, o) }, fail)
	if err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("webhooks", webhooksReady); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	// Ready once the informer caches have synced: before that the manager
	// would act on an empty view of the cluster.
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("informer caches not synced")
		}
		return nil
	}); err != nil {
		return err
	}
	log.Info("starting manager", "metrics", o.metricsAddr, "probes", o.probeAddr, "leaderElection", o.leaderElect, "webhookCerts", o.webhook.certs)
	if err := mgr.Start(ctx); err != nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}

// registerWebhooks adds every admission handler to the manager's webhook
// server; setupWebhooks decides when (once certificates are in place).
func registerWebhooks(mgr ctrl.Manager, o options) error {
	return webhooks.Register(mgr, webhooks.Options{
		Agent:   o.agentSidecar,
		PDPairs: webhooks.PDPairValidation{Everywhere: o.validatePDPairs, Budget: o.budget},
	})
}

// metricsOptions serves metrics in the clear (local runs, tests) or, with
// --metrics-secure, over HTTPS with controller-runtime's self-signed
// certificate to callers whose bearer token the API server accepts and who
// may GET the /metrics non-resource URL.
func metricsOptions(o options) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	return opts
}

// namespaces are the --watch-namespaces, none for every namespace.
func (o options) namespaces() []string {
	var out []string
	for _, ns := range strings.Split(o.watchNamespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			out = append(out, ns)
		}
	}
	return out
}

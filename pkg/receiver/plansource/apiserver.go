package plansource

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// API reads a PDPair's plan ConfigMaps through the Kubernetes API: the
// index by its name, then the shards it names. The index records every
// rank's SHA-256, so a shard updated between the reads fails the load
// rather than pairing a plan with another layout; the next poll retries.
type API struct {
	Client     kubernetes.Interface
	Namespace  string
	PDPair     string
	EngineRank int
}

// NewAPI builds an API source from a kubeconfig path and NAMESPACE/NAME.
func NewAPI(kubeconfig, pdpair string, engineRank int) (*API, error) {
	ns, name, ok := strings.Cut(pdpair, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("--pdpair %q is not NAMESPACE/NAME", pdpair)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	cfg.UserAgent = "pdtopo-receiver-agent"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &API{Client: cs, Namespace: ns, PDPair: name, EngineRank: engineRank}, nil
}

func (a *API) Describe() string { return fmt.Sprintf("PDPair %s/%s plans", a.Namespace, a.PDPair) }

// Version is the hash of the index: it records every rank's hash, so it
// changes whenever any published plan does (and, unlike a resourceVersion,
// not when only metadata is touched).
func (a *API) Version(ctx context.Context) (string, error) {
	cm, err := a.get(ctx, planstore.IndexConfigMapName(a.PDPair))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(cm.Data[planstore.IndexKey]))
	return hex.EncodeToString(sum[:]), nil
}

func (a *API) Load(ctx context.Context) (receiver.PlanSnapshot, error) {
	index, err := a.get(ctx, planstore.IndexConfigMapName(a.PDPair))
	if err != nil {
		return receiver.PlanSnapshot{}, err
	}
	objects := []planstore.Object{object(index)}
	idx, err := planstore.LoadIndex(objects)
	if err != nil {
		return receiver.PlanSnapshot{}, err
	}
	for _, sh := range idx.Shards {
		if !a.holdsRank(idx, sh) {
			continue // only this rank's shard is read
		}
		cm, err := a.get(ctx, sh.ConfigMap)
		if err != nil {
			return receiver.PlanSnapshot{}, err
		}
		objects = append(objects, object(cm))
	}
	plan, layout, hash, err := planstore.LoadEngineRank(objects, a.EngineRank)
	if err != nil {
		return receiver.PlanSnapshot{}, err
	}
	return receiver.PlanSnapshot{Layout: layout, Plan: plan, Hash: hash}, nil
}

// holdsRank reports whether shard sh holds this engine rank's plan (or the
// rank is invalid, and the loader must say so).
func (a *API) holdsRank(idx *planstore.Index, sh planstore.Shard) bool {
	d := idx.Layout.Decode
	if a.EngineRank < 0 || a.EngineRank >= d.TPSize || d.TPPerDP() < 1 {
		return true
	}
	r := a.EngineRank % d.TPPerDP()
	return r >= sh.FirstRank && r <= sh.LastRank
}

func (a *API) get(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	cm, err := a.Client.CoreV1().ConfigMaps(a.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", a.Namespace, name, err)
	}
	return cm, nil
}

func object(cm *corev1.ConfigMap) planstore.Object {
	return planstore.Object{Name: cm.Name, Data: cm.Data, BinaryData: cm.BinaryData}
}

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

package cli

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// defaultRequestTimeout bounds each command's API calls when the user gives
// no --request-timeout, so an unreachable server fails instead of hanging.
const defaultRequestTimeout = 30 * time.Second

// Cluster is a connection to the API server chosen by the kubectl flags.
type Cluster struct {
	Client    client.Client
	Namespace string
	// Where names the context and namespace for messages.
	Where string
}

// Connect connects to the API server the kubectl flags choose.
func Connect(kube *genericclioptions.ConfigFlags) (*Cluster, error) {
	loader := kube.ToRawKubeConfigLoader()
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, UsageErrorf("reading the kubeconfig: %v", err)
	}
	cfg, err := kube.ToRESTConfig()
	if err != nil {
		return nil, UsageErrorf("reading the kubeconfig: %v", err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = defaultRequestTimeout
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := pdv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	// A static mapper: the command reads two kinds it knows, so it needs no
	// discovery round trip (which would also turn a missing CRD into an
	// obscure mapping error instead of the API server's NotFound).
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(pdv1.GroupVersion.WithKind("PDPair"), meta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, ClusterErrorf("connecting to %s: %v", cfg.Host, err)
	}
	where := fmt.Sprintf("namespace %q", ns)
	if raw, err := loader.RawConfig(); err == nil {
		ctxName := raw.CurrentContext
		if kube.Context != nil && *kube.Context != "" {
			ctxName = *kube.Context
		}
		if ctxName != "" {
			where += fmt.Sprintf(" of context %q", ctxName)
		}
	}
	return &Cluster{Client: c, Namespace: ns, Where: where}, nil
}

// GetPair reads one PDPair; a missing pair is a usage error (like a missing
// file), any other failure a cluster error.
func (c *Cluster) GetPair(ctx context.Context, name string) (*pdv1.PDPair, error) {
	var pair pdv1.PDPair
	err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, &pair)
	switch {
	case err == nil:
		return &pair, nil
	case apierrors.IsNotFound(err):
		return nil, UsageErrorf("PDPair %q not found in %s", name, c.Where)
	default:
		return nil, ClusterErrorf("reading PDPair %q in %s: %v", name, c.Where, err)
	}
}

// ListPairs reads every PDPair of the namespace, or of all namespaces.
func (c *Cluster) ListPairs(ctx context.Context, allNamespaces bool) ([]pdv1.PDPair, error) {
	var list pdv1.PDPairList
	var opts []client.ListOption
	where := "all namespaces"
	if !allNamespaces {
		opts = append(opts, client.InNamespace(c.Namespace))
		where = c.Where
	}
	if err := c.Client.List(ctx, &list, opts...); err != nil {
		return nil, ClusterErrorf("listing PDPairs in %s: %v", where, err)
	}
	return list.Items, nil
}

// ConfigMap reads one ConfigMap of the namespace.
func (c *Cluster) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	var cm corev1.ConfigMap
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &cm); err != nil {
		return nil, err
	}
	return &cm, nil
}

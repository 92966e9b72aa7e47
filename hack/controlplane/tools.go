//go:build tools

// Package controlplane pins the real kube-apiserver and etcd that back `make run`
// and the envtest suites. It is a separate module so that the product's go.mod
// never carries k8s.io/kubernetes.
package controlplane

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)

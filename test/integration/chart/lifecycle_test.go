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

package chart

import (
	"context"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/test/fixtures"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

// TestHelmInstallUpgradeUninstall runs the chart's life with the real helmchart.Helm
// against a real API server (which has no CRD of pdtopo's beforehand): an
// install; the manager's certificate rotator writing the Secret and both
// caBundles (done here by the test, with its own field manager, as the
// rotator does); an upgrade that changes values, which must leave the
// rotator's data alone; an uninstall, which removes the webhooks (a
// dangling Fail-policy webhook would block every decode pod) but keeps the
// CRD and the PDPairs; and a second install over the kept CRD.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	c, kubeconfig, root := bareAPIServer(t)
	ctx := context.Background()
	helm := func(args ...string) {
		t.Helper()
		if out, err := runHelm(t, kubeconfig, args...); err != nil {
			t.Fatalf("helm %v: %v\n%s", args, err, out)
		}
	}
	chart := filepath.Join(root, helmchart.ChartDir)
	const (
		secretName = "pdtopo-webhook-server-cert"
		mutating   = "pdtopo-mutating-webhook-configuration"
		validating = "pdtopo-validating-webhook-configuration"
		crdName    = "pdpairs.pd.pdtopo.dev"
	)
	ca := []byte("-----BEGIN CERTIFICATE-----\nrotator's CA\n-----END CERTIFICATE-----\n")

	helm("install", release, chart, "--create-namespace")
	var crd apiextensionsv1.CustomResourceDefinition
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, &crd); err != nil {
		t.Fatalf("the install made no CRD: %v", err)
	}
	if crd.Annotations["helm.sh/resource-policy"] != "keep" {
		t.Errorf("the CRD's annotations %v lack helm.sh/resource-policy=keep", crd.Annotations)
	}

	// The rotator's part, as its own field manager.
	var secret corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &secret); err != nil {
		t.Fatal(err)
	}
	secret.Data = map[string][]byte{"ca.crt": ca, "tls.crt": []byte("serving cert"), "tls.key": []byte("serving key")}
	if err := c.Update(ctx, &secret, client.FieldOwner("cert-rotator")); err != nil {
		t.Fatal(err)
	}
	var mw admissionregistrationv1.MutatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: mutating}, &mw); err != nil {
		t.Fatal(err)
	}
	mw.Webhooks[0].ClientConfig.CABundle = ca
	if err := c.Update(ctx, &mw, client.FieldOwner("cert-rotator")); err != nil {
		t.Fatal(err)
	}
	var vw admissionregistrationv1.ValidatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: validating}, &vw); err != nil {
		t.Fatal(err)
	}
	vw.Webhooks[0].ClientConfig.CABundle = ca
	if err := c.Update(ctx, &vw, client.FieldOwner("cert-rotator")); err != nil {
		t.Fatal(err)
	}
	pair := fixtures.GQAPair("default", "kept", 8, 4, 80, 512)
	if err := c.Create(ctx, pair); err != nil {
		t.Fatal(err)
	}

	helm("upgrade", release, chart, "--set", "replicaCount=3", "--set", "webhook.validatePDPairs=true")
	var deploy appsv1.Deployment
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "pdtopo-controller-manager"}, &deploy); err != nil {
		t.Fatal(err)
	}
	if *deploy.Spec.Replicas != 3 || !slices.Contains(deploy.Spec.Template.Spec.Containers[0].Args, "--validate-pdpairs") {
		t.Errorf("after the upgrade: %d replicas, args %v; want 3 and --validate-pdpairs", *deploy.Spec.Replicas, deploy.Spec.Template.Spec.Containers[0].Args)
	}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, &secret); err != nil {
		t.Fatal(err)
	}
	if string(secret.Data["ca.crt"]) != string(ca) || len(secret.Data["tls.key"]) == 0 {
		t.Errorf("the upgrade wiped the rotator's certificate Secret: %v", slices.Sorted(maps.Keys(secret.Data)))
	}
	if err := c.Get(ctx, client.ObjectKey{Name: mutating}, &mw); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: validating}, &vw); err != nil {
		t.Fatal(err)
	}
	if string(mw.Webhooks[0].ClientConfig.CABundle) != string(ca) || string(vw.Webhooks[0].ClientConfig.CABundle) != string(ca) {
		t.Error("the upgrade wiped a webhook configuration's caBundle: the API server could no longer call the webhooks")
	}

	helm("uninstall", release)
	for _, obj := range []client.Object{&admissionregistrationv1.MutatingWebhookConfiguration{}, &admissionregistrationv1.ValidatingWebhookConfiguration{}} {
		name := mutating
		if _, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok {
			name = validating
		}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, obj); !apierrors.IsNotFound(err) {
			t.Errorf("after helm uninstall, %s: %v (want it gone)", name, err)
		}
	}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, &crd); err != nil {
		t.Errorf("helm uninstall removed the CRD (crds.keep): %v", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pair), &pdv1.PDPair{}); err != nil {
		t.Errorf("helm uninstall removed a PDPair: %v", err)
	}

	helm("install", release, chart)
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "pdtopo-controller-manager"}, &deploy); err != nil {
		t.Errorf("the second install over the kept CRD: %v", err)
	}
}

// bareAPIServer starts a kube-apiserver with no CRD of pdtopo's, and
// returns a client, an admin kubeconfig and the repository root.
func bareAPIServer(t *testing.T) (client.Client, string, string) {
	t.Helper()
	env := testutil.StartBareForTest(t)
	cfg := env.Config
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, pdv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, testutil.AdminKubeconfig(t, env), env.Root
}

// runHelm runs bin/helm against the kubeconfig in the release namespace.
func runHelm(t *testing.T, kubeconfig string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(helmchart.Helm(t), append(args, "--kubeconfig", kubeconfig, "--namespace", namespace)...).CombinedOutput()
	return string(out), err
}

// A CRD installed the kustomize way (make install) is not adopted by
// accident: helm install refuses it, naming it, and --take-ownership hands
// it to the release (docs/helm.md says both).
func TestHelmInstallOverAKustomizeCRD(t *testing.T) {
	_, kubeconfig, root := bareAPIServer(t)
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl")
	if out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "--server-side", "-k", filepath.Join(root, "config", "crd")).CombinedOutput(); err != nil {
		t.Fatalf("make install's apply: %v\n%s", err, out)
	}
	chart := filepath.Join(root, helmchart.ChartDir)
	out, err := runHelm(t, kubeconfig, "install", release, chart, "--create-namespace")
	if err == nil || !strings.Contains(out, "pdpairs.pd.pdtopo.dev") || !strings.Contains(out, "exists and cannot be imported into the current release") {
		t.Fatalf("helm install over a kustomize CRD: %v\n%s", err, out)
	}
	if out, err := runHelm(t, kubeconfig, "install", release, chart, "--create-namespace", "--take-ownership"); err != nil {
		t.Fatalf("helm install --take-ownership: %v\n%s", err, out)
	}
}

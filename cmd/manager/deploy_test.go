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

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/test/testutil"
)

// The names the deployed manager is told (its flags in config/manager) are
// the names config/default gives the objects after its prefix and
// namespace: the Service, the Secret, the webhook configuration, and the
// Secret mounted where the webhook server reads its certificate.
func TestDeployedWebhookNamesAgree(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl") // KUBEBUILDER_ASSETS or bin/
	_, err = os.Stat(kubectl)
	testutil.RequireTool(t, err, testutil.SkipEnv, "kubectl kustomize renders config/default (make kubectl; make test builds it)")
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(root, "config", "default")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	var (
		deploy   *appsv1.Deployment
		mutating *admissionregistrationv1.MutatingWebhookConfiguration
		objects  = map[string]string{} // kind → namespace/name, for Service and Secret
	)
	for doc := range strings.SplitSeq(string(out), "\n---\n") {
		var meta struct {
			Kind     string `json:"kind"`
			Metadata struct{ Name, Namespace string }
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Deployment":
			deploy = &appsv1.Deployment{}
			if err := yaml.Unmarshal([]byte(doc), deploy); err != nil {
				t.Fatal(err)
			}
		case "MutatingWebhookConfiguration":
			mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.Unmarshal([]byte(doc), mutating); err != nil {
				t.Fatal(err)
			}
		case "Service", "Secret":
			if strings.Contains(meta.Metadata.Name, "webhook") {
				objects[meta.Kind] = meta.Metadata.Namespace + "/" + meta.Metadata.Name
			}
		}
	}
	if deploy == nil || mutating == nil {
		t.Fatal("config/default has no manager Deployment or no MutatingWebhookConfiguration")
	}
	c := deploy.Spec.Template.Spec.Containers[0]
	t.Setenv("POD_NAMESPACE", deploy.Namespace) // what the downward API gives it
	o, err := parseFlags(c.Args)
	if err != nil {
		t.Fatalf("the deployed manager's flags %q: %v", c.Args, err)
	}
	ns := deploy.Namespace
	svc := mutating.Webhooks[0].ClientConfig.Service
	for what, pair := range map[string][2]string{
		"--webhook-certs":                   {o.webhook.certs, webhookCertsRotate},
		"--webhook-service-name":            {ns + "/" + o.webhook.serviceName, objects["Service"]},
		"the webhook's Service":             {svc.Namespace + "/" + svc.Name, objects["Service"]},
		"--webhook-secret-name":             {ns + "/" + o.webhook.secretName, objects["Secret"]},
		"--mutating-webhook-configurations": {o.webhook.mutatingConfigs, mutating.Name},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s is %q, config/default makes %q", what, pair[0], pair[1])
		}
	}
	mounted := ""
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name && m.MountPath == o.webhook.certDir && v.Secret != nil {
				mounted = ns + "/" + v.Secret.SecretName
			}
		}
	}
	if mounted != objects["Secret"] {
		t.Errorf("the Secret mounted at --webhook-cert-dir %s is %q, want %q", o.webhook.certDir, mounted, objects["Secret"])
	}
	if !hasEnv(c, "POD_NAMESPACE") {
		t.Error("the manager has no POD_NAMESPACE: the rotator would not know its namespace")
	}
}

func hasEnv(c corev1.Container, name string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return true
		}
	}
	return false
}

// config/default runs two manager replicas with leader election (one
// reconciles, both serve the webhooks, whose failurePolicy is Fail), spread
// over nodes, and a PodDisruptionBudget that evicts one at a time.
func TestDeployedManagerIsHighlyAvailable(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl")
	_, err = os.Stat(kubectl)
	testutil.RequireTool(t, err, testutil.SkipEnv, "kubectl kustomize renders config/default (make kubectl; make test builds it)")
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(root, "config", "default")).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize config/default: %v", err)
	}
	var (
		deploy *appsv1.Deployment
		pdbs   []policyv1.PodDisruptionBudget
	)
	for doc := range strings.SplitSeq(string(out), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Deployment":
			deploy = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict([]byte(doc), deploy); err != nil {
				t.Fatal(err)
			}
		case "PodDisruptionBudget":
			var pdb policyv1.PodDisruptionBudget
			if err := yaml.UnmarshalStrict([]byte(doc), &pdb); err != nil {
				t.Fatal(err)
			}
			pdbs = append(pdbs, pdb)
		}
	}
	if deploy == nil {
		t.Fatal("config/default has no Deployment")
	}
	if r := deploy.Spec.Replicas; r == nil || *r < 2 {
		t.Errorf("the manager runs %v replicas, want 2", r)
	}
	if !slices.Contains(deploy.Spec.Template.Spec.Containers[0].Args, "--leader-elect") {
		t.Error("replicas without --leader-elect would reconcile the same PDPairs at once")
	}
	pods := labels.Set(deploy.Spec.Template.Labels)
	spread := false
	for _, c := range deploy.Spec.Template.Spec.TopologySpreadConstraints {
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		spread = spread || (err == nil && c.TopologyKey == "kubernetes.io/hostname" && sel.Matches(pods))
	}
	if !spread {
		t.Errorf("the replicas are not spread over nodes: %+v", deploy.Spec.Template.Spec.TopologySpreadConstraints)
	}
	var guarding []string
	for _, pdb := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || pdb.Namespace != deploy.Namespace || !sel.Matches(pods) {
			continue
		}
		if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.MinAvailable != nil {
			t.Errorf("PodDisruptionBudget %s: maxUnavailable %v, minAvailable %v; want one replica evicted at a time", pdb.Name, pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
		}
		guarding = append(guarding, pdb.Name)
	}
	if len(guarding) != 1 {
		t.Errorf("PodDisruptionBudgets selecting the manager pods: %v, want one", guarding)
	}
}

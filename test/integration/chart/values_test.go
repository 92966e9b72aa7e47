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
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/pdtopo/pdtopo/controllers"
	"github.com/pdtopo/pdtopo/internal/planbudget"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

// TestValuesSchemaRefusesBadValues: values.schema.json turns each mistake
// into an error naming the value, before anything is rendered.
func TestValuesSchemaRefusesBadValues(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		// want are substrings of Helm's error.
		want []string
	}{
		{"unknown top-level key", map[string]any{"replicas": 2}, []string{"replicas"}},
		{"unknown nested key", map[string]any{"webhook": map[string]any{"enabled": true, "certs": "rotate", "failurPolicy": "Fail"}}, []string{"failurPolicy"}},
		{"certificate source", map[string]any{"webhook": map[string]any{"enabled": true, "certs": "selfSigned"}}, []string{"webhook/certs", "rotate", "certManager"}},
		{"negative budget", map[string]any{"planBudget": map[string]any{"maxPlanFragments": -1}}, []string{"maxPlanFragments", "-1"}},
		{"budget as a quantity string", map[string]any{"planBudget": map[string]any{"maxPlanBytes": "192Mi"}}, []string{"maxPlanBytes"}},
		{"more watched namespaces than namespaced mode is for", map[string]any{"watchNamespaces": manyNamespaces(101)}, []string{"watchNamespaces", "100"}},
		{"namespace that is not a DNS label", map[string]any{"watchNamespaces": []string{"Team_A"}}, []string{"watchNamespaces", "Team_A"}},
		{"image repository with a tag in it", map[string]any{"image": map[string]any{"repository": "ghcr.io/pdtopo/manager:v1"}}, []string{"image", "repository"}},
		{"tag with a space", map[string]any{"agentImage": map[string]any{"repository": "ghcr.io/pdtopo/receiver-agent", "tag": "v1 beta"}}, []string{"agentImage", "tag"}},
		{"digest without an algorithm", map[string]any{"image": map[string]any{"repository": "ghcr.io/pdtopo/manager", "digest": "0123456789abcdef0123456789abcdef"}}, []string{"image", "digest"}},
		{"zero reconciles", map[string]any{"maxConcurrentReconciles": 0}, []string{"maxConcurrentReconciles"}},
		{"an argument that is not a flag", map[string]any{"extraArgs": []string{"verbose"}}, []string{"extraArgs", "verbose"}},
		{"interval", map[string]any{"metrics": map[string]any{"enabled": true, "serviceMonitor": map[string]any{"enabled": true, "interval": "30 seconds"}}}, []string{"interval"}},
		{"fullname too long for a Service", map[string]any{"fullnameOverride": strings.Repeat("p", 37)}, []string{"fullnameOverride"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helmchart.Template(t, release, namespace, c.values)
			if err == nil {
				t.Fatalf("rendered without complaint:\n%.400s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the error does not name %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestChartRendersEveryMode renders the modes the values offer and checks
// what each adds or takes away, so that no combination is left untried.
func TestChartRendersEveryMode(t *testing.T) {
	for _, c := range []struct {
		name   string
		values map[string]any
		// has and hasNot are object keys; args and noArgs are manager flags.
		has, hasNot  []string
		args, noArgs []string
		// check looks at anything else.
		check func(t *testing.T, objs map[string]unstructured.Unstructured)
	}{
		{
			name: "defaults",
			has: []string{"ClusterRole pdtopo-manager-role", "Secret pdtopo-system/pdtopo-webhook-server-cert", "MutatingWebhookConfiguration pdtopo-mutating-webhook-configuration",
				"PodDisruptionBudget pdtopo-system/pdtopo-controller-manager"},
			hasNot: []string{"ClusterRole pdtopo-manager-cluster", "Certificate pdtopo-system/pdtopo-serving-cert", "ServiceMonitor pdtopo-system/pdtopo-controller-manager-metrics"},
			args:   []string{"--webhook-certs=rotate", "--metrics-secure", "--leader-elect", "--max-plan-fragments=524288"},
			noArgs: []string{"--watch-namespaces", "--validate-pdpairs"},
			check: func(t *testing.T, objs map[string]unstructured.Unstructured) {
				// Two replicas behind a Fail webhook, one evicted at a time.
				d := objs["Deployment pdtopo-system/pdtopo-controller-manager"]
				replicas := number(d.Object, "spec", "replicas")
				pods, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "labels")
				pdb := objs["PodDisruptionBudget pdtopo-system/pdtopo-controller-manager"]
				selects, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels")
				maxUnavailable := number(pdb.Object, "spec", "maxUnavailable")
				if replicas < 2 || maxUnavailable != 1 || len(selects) == 0 {
					t.Errorf("%d replicas, a PodDisruptionBudget of maxUnavailable %d selecting %v; want 2 replicas, one evicted at a time", replicas, maxUnavailable, selects)
				}
				for k, v := range selects {
					if pods[k] != v {
						t.Errorf("the PodDisruptionBudget selects %s=%s, which the manager pods (%v) do not carry", k, v, pods)
					}
				}
			},
		},
		{
			name: "namespaced with cert-manager and validation",
			values: map[string]any{
				"watchNamespaces": []string{"team-a", "team-b"},
				"webhook":         map[string]any{"enabled": true, "certs": "certManager", "validatePDPairs": true},
				"planBudget":      map[string]any{"maxPlanFragments": 1000, "maxPlanBytes": 0, "maxRankPlanBytes": 1 << 20, "maxPlanMemory": 64 << 20},
			},
			has: []string{"Role team-a/pdtopo-manager-namespaced", "RoleBinding team-b/pdtopo-manager-namespaced", "ClusterRole pdtopo-manager-cluster",
				"Issuer pdtopo-system/pdtopo-selfsigned-issuer", "Certificate pdtopo-system/pdtopo-serving-cert"},
			hasNot: []string{"ClusterRole pdtopo-manager-role", "ClusterRoleBinding pdtopo-manager-rolebinding", "Secret pdtopo-system/pdtopo-webhook-server-cert",
				"Role pdtopo-system/pdtopo-manager-role"},
			args: []string{"--watch-namespaces=team-a,team-b", "--webhook-certs=files", "--validate-pdpairs",
				"--max-plan-fragments=1000", "--max-plan-bytes=0", "--max-rank-plan-bytes=1048576", "--max-plan-memory=67108864"},
			noArgs: []string{"--webhook-certs=rotate", "--webhook-secret-name"},
			check: func(t *testing.T, objs map[string]unstructured.Unstructured) {
				// Pods and PDPairs elsewhere never reach a manager that
				// cannot read them.
				for _, key := range []string{"MutatingWebhookConfiguration pdtopo-mutating-webhook-configuration",
					"ValidatingWebhookConfiguration pdtopo-validating-webhook-configuration"} {
					hooks, _, _ := unstructured.NestedSlice(objs[key].Object, "webhooks")
					if len(hooks) != 1 {
						t.Fatalf("%s: %d webhooks", key, len(hooks))
					}
					exprs, _, _ := unstructured.NestedSlice(hooks[0].(map[string]any), "namespaceSelector", "matchExpressions")
					want := []any{map[string]any{"key": "kubernetes.io/metadata.name", "operator": "In", "values": []any{"team-a", "team-b"}}}
					if !equality.Semantic.DeepEqual(exprs, want) {
						t.Errorf("%s: namespaceSelector %v, want %v", key, exprs, want)
					}
					hook := objs[key]
					if ann := hook.GetAnnotations()["cert-manager.io/inject-ca-from"]; ann != "pdtopo-system/pdtopo-serving-cert" {
						t.Errorf("%s: inject-ca-from %q, want the chart's Certificate", key, ann)
					}
				}
				cert := objs["Certificate pdtopo-system/pdtopo-serving-cert"]
				dns, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
				secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
				if !slices.Equal(dns, []string{"pdtopo-webhook-service.pdtopo-system.svc", "pdtopo-webhook-service.pdtopo-system.svc.cluster.local"}) ||
					secret != "pdtopo-webhook-server-cert" {
					t.Errorf("the Certificate names %v into %q; want the webhook Service's DNS names into the mounted Secret", dns, secret)
				}
			},
		},
		{
			name: "no webhooks, no metrics",
			values: map[string]any{"webhook": map[string]any{"enabled": false, "certs": "rotate"}, "metrics": map[string]any{"enabled": false},
				"leaderElection": map[string]any{"enabled": false}, "replicaCount": 1},
			hasNot: []string{"MutatingWebhookConfiguration pdtopo-mutating-webhook-configuration", "Service pdtopo-system/pdtopo-webhook-service",
				"Service pdtopo-system/pdtopo-controller-manager-metrics", "Secret pdtopo-system/pdtopo-webhook-server-cert"},
			args:   []string{"--webhook-certs=none", "--metrics-bind-address=0"},
			noArgs: []string{"--metrics-secure", "--leader-elect"},
		},
		{
			name:   "another release name",
			values: map[string]any{"fullnameOverride": "infer"},
			has:    []string{"Deployment pdtopo-system/infer-controller-manager", "ClusterRole infer-manager-role"},
			args:   []string{"--webhook-service-name=infer-webhook-service", "--mutating-webhook-configurations=infer-mutating-webhook-configuration"},
			check: func(t *testing.T, objs map[string]unstructured.Unstructured) {
				// The manager may touch the release's webhook configurations, by name, and no others.
				rules, _, _ := unstructured.NestedSlice(objs["ClusterRole infer-manager-role"].Object, "rules")
				named := map[string][]any{}
				for _, r := range rules {
					rule := r.(map[string]any)
					for _, res := range rule["resources"].([]any) {
						if strings.HasSuffix(res.(string), "webhookconfigurations") {
							names, _ := rule["resourceNames"].([]any)
							named[res.(string)] = names
						}
					}
				}
				want := map[string][]any{"mutatingwebhookconfigurations": {"infer-mutating-webhook-configuration"}, "validatingwebhookconfigurations": {"infer-validating-webhook-configuration"}}
				if !equality.Semantic.DeepEqual(named, want) {
					t.Errorf("the ClusterRole's webhook configuration rules name %v, want %v", named, want)
				}
			},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs := helmchart.Render(t, release, namespace, c.values)
			got := map[string]bool{}
			byKey := map[string]unstructured.Unstructured{}
			var args []string
			for _, o := range objs {
				got[helmchart.Key(o)] = true
				byKey[helmchart.Key(o)] = o
				if o.GetKind() == "Deployment" {
					args = helmchart.Manager(t, o).Args
				}
			}
			for _, k := range c.has {
				if !got[k] {
					t.Errorf("no %s", k)
				}
			}
			for _, k := range c.hasNot {
				if got[k] {
					t.Errorf("%s rendered", k)
				}
			}
			joined := strings.Join(args, " ")
			for _, a := range c.args {
				if !strings.Contains(joined, a) {
					t.Errorf("manager args %q lack %s", args, a)
				}
			}
			for _, a := range c.noArgs {
				if strings.Contains(joined, a) {
					t.Errorf("manager args %q have %s", args, a)
				}
			}
			if c.check != nil {
				c.check(t, byKey)
			}
		})
	}
}

// number is an integer field of a decoded object (JSON numbers decode as
// int64 or float64), or -1.
func number(obj map[string]any, fields ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return -1
}

// Replicas past one without leader election would reconcile the same
// PDPairs at once: the chart refuses to render.
func TestChartRefusesReplicasWithoutLeaderElection(t *testing.T) {
	_, err := helmchart.Template(t, release, namespace, map[string]any{"replicaCount": 2, "leaderElection": map[string]any{"enabled": false}})
	if err == nil || !strings.Contains(err.Error(), "replicaCount is 2 but leaderElection.enabled is false") {
		t.Fatalf("rendering 2 replicas without leader election: %v", err)
	}
}

// TestChartDefaultsAreTheManagers: values.yaml writes out the manager's own
// defaults, and files/ holds the generated CRD, RBAC and webhooks byte for
// byte.
func TestChartDefaultsAreTheManagers(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, helmchart.ChartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		PlanBudget struct {
			MaxPlanFragments, MaxPlanBytes, MaxRankPlanBytes, MaxPlanMemory int64
		} `json:"planBudget"`
	}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b := v.PlanBudget
	want := transferplan.DefaultBudget
	for _, c := range []struct {
		flag      string
		got, want int64
	}{
		{planbudget.FlagMaxFragments, b.MaxPlanFragments, want.MaxFragments},
		{planbudget.FlagMaxPlanBytes, b.MaxPlanBytes, want.MaxPlanBytes},
		{planbudget.FlagMaxRankPlanBytes, b.MaxRankPlanBytes, want.MaxRankPlanBytes},
		{"max-plan-memory", b.MaxPlanMemory, controllers.DefaultMaxPlanMemoryBytes},
	} {
		if c.got != c.want {
			t.Errorf("values.yaml sets --%s to %d, the manager's default is %d", c.flag, c.got, c.want)
		}
	}

	// The files the templates render from (files/README.md).
	for copied, source := range map[string]string{
		"crds/pd.pdtopo.dev_pdpairs.yaml":  "config/crd/bases/pd.pdtopo.dev_pdpairs.yaml",
		"generated/rbac-role.yaml":         "config/rbac/role.yaml",
		"generated/webhook-manifests.yaml": "config/webhook/manifests.yaml",
		"generated/namespaced-role.yaml":   "config/namespaced/role.yaml",
	} {
		want, err := os.ReadFile(filepath.Join(root, source))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, helmchart.ChartDir, "files", copied))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("charts/pdtopo/files/%s is not %s: run make manifests", copied, source)
		}
	}
}

// TestChartLints: helm lint --strict finds nothing.
func TestChartLints(t *testing.T) {
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(helmchart.Helm(t), "lint", "--strict", filepath.Join(root, helmchart.ChartDir)).CombinedOutput()
	if err != nil {
		t.Fatalf("helm lint --strict: %v\n%s", err, out)
	}
}

func manyNamespaces(n int) []string {
	ns := make([]string, n)
	for i := range ns {
		ns[i] = fmt.Sprintf("team-%d", i)
	}
	return ns
}

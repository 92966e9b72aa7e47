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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pdtopo/pdtopo/test/testutil"
	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

// TestChartAppliesToTheRealAPIServer renders the chart in each of its modes
// and applies the output to a real kube-apiserver with a server-side dry
// run: every object must be one the API server accepts. cert-manager's and
// the Prometheus Operator's kinds are served by stand-in CRDs that accept
// any body (the API server checks their metadata, names and namespaces).
func TestChartAppliesToTheRealAPIServer(t *testing.T) {
	env := testutil.StartForTest(t)
	kubectl := filepath.Join(testutil.BinDir(t), "kubectl")
	ctx := context.Background()
	c, err := client.New(env.Config, client.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	if err := apiextensionsv1.AddToScheme(c.Scheme()); err != nil {
		t.Fatal(err)
	}
	// A dry run creates nothing, so the namespaces the objects live in must
	// exist for real.
	testutil.CreateNamespaces(t, c, namespace, "team-a", "team-b")
	for _, crd := range []struct{ group, kind, plural string }{
		{"cert-manager.io", "Issuer", "issuers"},
		{"cert-manager.io", "Certificate", "certificates"},
		{"monitoring.coreos.com", "ServiceMonitor", "servicemonitors"},
		{"monitoring.coreos.com", "PodMonitor", "podmonitors"},
	} {
		if err := c.Create(ctx, standInCRD(crd.group, crd.kind, crd.plural)); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig := testutil.AdminKubeconfig(t, env)
	waitServed(t, kubectl, kubeconfig, "issuers.cert-manager.io", "podmonitors.monitoring.coreos.com")

	for _, c := range []struct {
		name   string
		values map[string]any
	}{
		{"defaults", nil},
		{"everything on", map[string]any{
			"webhook": map[string]any{"enabled": true, "certs": "rotate", "validatePDPairs": true},
			"metrics": map[string]any{"enabled": true, "secure": true,
				"serviceMonitor":  map[string]any{"enabled": true, "labels": map[string]any{"release": "prometheus"}},
				"agentPodMonitor": map[string]any{"enabled": true}},
			"replicaCount": 2, "imagePullSecrets": []map[string]any{{"name": "regcred"}},
			"podLabels": map[string]any{"team": "inference"}, "podAnnotations": map[string]any{"example.com/note": "x"},
			"nodeSelector": map[string]any{"kubernetes.io/os": "linux"}, "priorityClassName": "system-cluster-critical",
			"tolerations": []map[string]any{{"key": "dedicated", "operator": "Equal", "value": "control", "effect": "NoSchedule"}},
			"extraArgs":   []string{"--zap-log-level=debug"},
			"image":       map[string]any{"repository": "registry.example:5000/team/manager", "tag": "v1", "digest": "sha256:" + strings.Repeat("ab", 32)},
			"agentImage":  map[string]any{"repository": "registry.example:5000/team/agent", "digest": "sha256:" + strings.Repeat("cd", 32)},
		}},
		{"network policy", map[string]any{
			"networkPolicy": map[string]any{"enabled": true, "namespaces": []string{"team-a", "team-b"},
				"probeFrom": []map[string]any{{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}}},
		}},
		{"network policy in the watched namespaces", map[string]any{
			"watchNamespaces": []string{"team-a", "team-b"},
			"networkPolicy":   map[string]any{"enabled": true, "nodeCIDRs": []string{"192.168.0.0/16", "fd00::/64"}},
		}},
		{"namespaced with cert-manager", map[string]any{
			"watchNamespaces": []string{"team-a", "team-b"},
			"webhook":         map[string]any{"enabled": true, "certs": "certManager"},
			"metrics":         map[string]any{"enabled": true, "agentPodMonitor": map[string]any{"enabled": true}},
		}},
		{"cert-manager with a ClusterIssuer", map[string]any{
			"webhook": map[string]any{"enabled": true, "certs": "certManager",
				"certManager": map[string]any{"issuerRef": map[string]any{"name": "corp-ca", "kind": "ClusterIssuer"}}},
		}},
		{"bare", map[string]any{
			"webhook": map[string]any{"enabled": false, "certs": "rotate"}, "metrics": map[string]any{"enabled": false},
			"crds": map[string]any{"install": false}, "fullnameOverride": "bare",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw, err := helmchart.Template(t, release, namespace, c.values)
			if err != nil {
				t.Fatal(err)
			}
			objs, err := helmchart.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(t.TempDir(), "chart.yaml")
			if err := os.WriteFile(file, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			accepted, out, err := helmchart.ServerDryRun(kubectl, kubeconfig, file)
			if err != nil {
				t.Fatalf("server-side dry run: %v\n%s", err, out)
			}
			if accepted != len(objs) {
				t.Errorf("%d objects accepted, the chart rendered %d:\n%s", accepted, len(objs), out)
			}
		})
	}
}

// standInCRD serves a third-party kind with a schema that keeps any body.
func standInCRD(group, kind, plural string) *apiextensionsv1.CustomResourceDefinition {
	preserve := true
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + "." + group},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Kind: kind, Plural: plural, ListKind: kind + "List", Singular: strings.ToLower(kind)},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
}

// waitServed waits until the API server serves the CRDs' resources.
func waitServed(t *testing.T, kubectl, kubeconfig string, resources ...string) {
	t.Helper()
	for _, r := range resources {
		testutil.Eventually(t, 30*time.Second, r+" served", func() error {
			out, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "get", r, "-A").CombinedOutput()
			if err != nil {
				return fmt.Errorf("%w: %s", err, out)
			}
			return nil
		})
	}
}

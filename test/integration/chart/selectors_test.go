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
	"maps"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/pdtopo/pdtopo/test/testutil/helmchart"
)

// rendered is one release's manager pod labels and what its Services and
// ServiceMonitor select.
type rendered struct {
	deploymentName string
	selector       map[string]string // the Deployment's matchLabels
	podLabels      map[string]string // its pod template's labels
	services       map[string]corev1.Service
	monitor        map[string]string // the ServiceMonitor's matchLabels
	names          []string          // every namespaced object's name
}

func renderRelease(t *testing.T, release string, values map[string]any) rendered {
	t.Helper()
	all := map[string]any{"metrics": map[string]any{"enabled": true, "serviceMonitor": map[string]any{"enabled": true}}}
	maps.Copy(all, values)
	r := rendered{services: map[string]corev1.Service{}}
	for _, o := range helmchart.Render(t, release, namespace, all) {
		if o.GetNamespace() != "" {
			r.names = append(r.names, o.GetName())
		}
		switch o.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			fromUnstructured(t, o, &d)
			r.deploymentName = d.Name
			r.selector = d.Spec.Selector.MatchLabels
			r.podLabels = d.Spec.Template.Labels
		case "Service":
			var s corev1.Service
			fromUnstructured(t, o, &s)
			r.services[s.Name] = s
		case "ServiceMonitor":
			r.monitor, _, _ = unstructured.NestedStringMap(o.Object, "spec", "selector", "matchLabels")
		}
	}
	if r.selector == nil || len(r.services) != 2 || r.monitor == nil {
		t.Fatalf("release %s: selector %v, %d Services, monitor %v", release, r.selector, len(r.services), r.monitor)
	}
	return r
}

func fromUnstructured(t *testing.T, u unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("%s: %v", helmchart.Key(u), err)
	}
}

// TestChartSelectsItsOwnRelease: the manager's pods are selected by the
// release's app.kubernetes.io/name (nameOverride) and instance, by the
// Deployment and by both Services; the ServiceMonitor selects the metrics
// Service only; and two releases in one namespace select nothing of each
// other's.
func TestChartSelectsItsOwnRelease(t *testing.T) {
	a := renderRelease(t, "pdtopo", nil)
	b := renderRelease(t, "infer", map[string]any{"nameOverride": "kvtopo"})
	c := renderRelease(t, "team", map[string]any{"fullnameOverride": "kv"})
	for _, x := range []struct {
		r              rendered
		name, instance string
		prefix         string
	}{
		{a, "pdtopo", "pdtopo", "pdtopo-"},
		{b, "kvtopo", "infer", "infer-kvtopo-"},
		{c, "pdtopo", "team", "kv-"},
	} {
		want := map[string]string{"app.kubernetes.io/name": x.name, "app.kubernetes.io/instance": x.instance, "app.kubernetes.io/component": "manager"}
		if !maps.Equal(x.r.selector, want) {
			t.Errorf("%s: Deployment selector %v, want %v", x.r.deploymentName, x.r.selector, want)
		}
		if !labels.SelectorFromSet(x.r.selector).Matches(labels.Set(x.r.podLabels)) {
			t.Errorf("%s: selector %v does not select its own pods %v", x.r.deploymentName, x.r.selector, x.r.podLabels)
		}
		for _, n := range x.r.names {
			if !strings.HasPrefix(n, x.prefix) {
				t.Errorf("release %s names an object %s, want the prefix %s", x.instance, n, x.prefix)
			}
		}
		for name, s := range x.r.services {
			if !maps.Equal(s.Spec.Selector, want) {
				t.Errorf("Service %s selects %v, want the manager's %v", name, s.Spec.Selector, want)
			}
			isMetrics := strings.HasSuffix(name, "-controller-manager-metrics")
			if got := labels.SelectorFromSet(x.r.monitor).Matches(labels.Set(s.Labels)); got != isMetrics {
				t.Errorf("the ServiceMonitor (%v) selects Service %s: %v, want %v", x.r.monitor, name, got, isMetrics)
			}
		}
	}
	// Two releases side by side: neither's Services nor Deployment select the
	// other's pods.
	for _, pair := range [][2]rendered{{a, b}, {b, a}, {a, c}, {c, a}} {
		mine, theirs := pair[0], pair[1]
		if labels.SelectorFromSet(mine.selector).Matches(labels.Set(theirs.podLabels)) {
			t.Errorf("%s selects the pods of %s", mine.deploymentName, theirs.deploymentName)
		}
		for name, s := range mine.services {
			if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(theirs.podLabels)) {
				t.Errorf("Service %s selects the pods of %s", name, theirs.deploymentName)
			}
		}
	}
}

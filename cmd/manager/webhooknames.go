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
	"net/http"
	"strings"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The certificate rotator (cert-controller) keeps an informer per kind of
// webhook configuration it injects its CA into, and an informer lists and
// watches every object of its kind: with the RBAC naming the manager's own
// configurations (resourceNames), those requests are forbidden. The API
// server authorizes a list or watch with a metadata.name field selector as
// a request for that one object, so the rotator is given a client
// configuration that adds the selector to its list and watch requests of
// each kind that has exactly one configuration to keep (the default).
// With several of one kind, they are listed unselected, and the RBAC must
// allow listing them all.

// webhookConfigsByName is mgr as the rotator sees it: the same manager, but
// its client configuration selects the webhook configurations by name.
func webhookConfigsByName(mgr ctrl.Manager, w webhookOptions) ctrl.Manager {
	names := map[string]string{}
	for resource, list := range map[string]string{
		"mutatingwebhookconfigurations":   w.mutatingConfigs,
		"validatingwebhookconfigurations": w.validatingConfigs,
	} {
		if n := splitNames(list); len(n) == 1 {
			names[resource] = n[0]
		}
	}
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return byName{next: rt, names: names} })
	return selectedManager{Manager: mgr, cfg: cfg}
}

type selectedManager struct {
	ctrl.Manager
	cfg *rest.Config
}

func (m selectedManager) GetConfig() *rest.Config { return m.cfg }

// byName adds fieldSelector=metadata.name=NAME to GET requests of the
// collection of a resource it has a name for (lists and watches).
type byName struct {
	next  http.RoundTripper
	names map[string]string // resource → the one name
}

const webhookAPIPath = "/apis/admissionregistration.k8s.io/v1/"

func (b byName) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet {
		if resource, ok := strings.CutPrefix(req.URL.Path, webhookAPIPath); ok {
			if name, ok := b.names[resource]; ok && req.URL.Query().Get("fieldSelector") == "" {
				req = req.Clone(req.Context())
				q := req.URL.Query()
				q.Set("fieldSelector", "metadata.name="+name)
				req.URL.RawQuery = q.Encode()
			}
		}
	}
	return b.next.RoundTrip(req)
}

// splitNames is a comma-separated flag's names.
func splitNames(list string) []string {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, name)
		}
	}
	return out
}

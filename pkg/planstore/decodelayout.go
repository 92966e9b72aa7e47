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

package planstore

import (
	"strings"

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// ReasonDecodeLayoutNotPublished: the plans published are for another
// decode layout than the one the loading pod was admitted under (a pod of
// the old layout mid-rollout, before the operator publishes its plans
// again, or after the last of them was dropped).
const ReasonDecodeLayoutNotPublished Reason = "DecodeLayoutNotPublished"

// LoadOption narrows what a loader accepts.
type LoadOption func(*loadOptions)

type loadOptions struct {
	decode *transferplan.Parallelism
}

// ForDecodeLayout loads only plans made for decode layout p: the layout the
// loading pod was admitted under, which its engine runs whatever the pair's
// spec says now. Without it a loader takes the published plans whatever
// their decode layout.
func ForDecodeLayout(p transferplan.Parallelism) LoadOption {
	return func(o *loadOptions) { o.decode = &p }
}

func optionsOf(opts []LoadOption) loadOptions {
	var o loadOptions
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// checkDecode refuses an index made for another decode layout than the
// one asked for, before any rank is looked up: the ranks of a pod of
// another layout may not even exist in it.
func (o loadOptions) checkDecode(idx *Index) error {
	if o.decode == nil || idx.Layout.Decode == *o.decode {
		return nil
	}
	return decodeNotPublished(idx.PDPair, idx.PlanHash, []transferplan.Parallelism{idx.Layout.Decode}, *o.decode)
}

// decodeNotPublished is the one refusal of a loader (one set or several)
// holding no plans for the decode layout the pod was admitted under; it
// names every decode layout published, once each.
func decodeNotPublished(pdpair, current string, published []transferplan.Parallelism, want transferplan.Parallelism) error {
	var names []string
	seen := map[transferplan.Parallelism]bool{}
	for _, p := range published {
		if !seen[p] {
			seen[p] = true
			names = append(names, p.String())
		}
	}
	noun := "layout"
	if len(names) > 1 {
		noun = "layouts"
	}
	return formatErrorf(ReasonDecodeLayoutNotPublished,
		"the plans published for %q (hash %s) are for decode %s %s; this pod was admitted under decode layout %s and waits for the operator to publish plans for it (it does while pods of that layout remain)",
		pdpair, current, noun, strings.Join(names, " and "), want)
}

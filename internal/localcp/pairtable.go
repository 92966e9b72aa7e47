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

package localcp

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// columns are the condition types the table shows, in column order.
var columns = []pdv1.PDPairConditionType{pdv1.PDPairLayoutCompatible, pdv1.PDPairPlansPublished, pdv1.PDPairReady}

// maxMessage bounds a condition message in the table; `kubectl describe`
// shows the whole of it.
const maxMessage = 160

// WriteTable writes one row per PDPair (sorted by namespace and name) with
// its layouts, plan kind and the status of its three conditions, and under
// every pair that is not Ready the reason and message that say why.
func WriteTable(w io.Writer, pairs []pdv1.PDPair) error {
	sorted := append([]pdv1.PDPair(nil), pairs...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].Name < sorted[j].Name
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tPREFILL TP/DP\tDECODE TP/DP\tPLAN\tCOMPATIBLE\tPUBLISHED\tREADY")
	var notes []string
	for i := range sorted {
		p := &sorted[i]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Namespace, p.Name,
			fleet(p.Spec.Prefill), fleet(p.Spec.Decode), planKind(p),
			condCell(p, columns[0]), condCell(p, columns[1]), condCell(p, columns[2]))
		if note := whyNotReady(p); note != "" {
			notes = append(notes, fmt.Sprintf("  %s/%s: %s", p.Namespace, p.Name, note))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(sorted) == 0 {
		_, err := fmt.Fprintln(w, "(no PDPairs)")
		return err
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

func fleet(f pdv1.FleetLayout) string {
	return fmt.Sprintf("%d/%d", f.TensorParallelSize, f.DataParallel())
}

func planKind(p *pdv1.PDPair) string {
	if p.Status.Plan == nil || p.Status.Plan.Kind == "" {
		return "-"
	}
	return p.Status.Plan.Kind
}

// condCell is the condition's status, "-" before the manager has written it,
// and marked with "*" while it describes an older generation of the spec.
func condCell(p *pdv1.PDPair, condType pdv1.PDPairConditionType) string {
	c := meta.FindStatusCondition(p.Status.Conditions, string(condType))
	if c == nil {
		return "-"
	}
	if c.ObservedGeneration < p.Generation {
		return string(c.Status) + "*"
	}
	return string(c.Status)
}

// whyNotReady is the first condition, in column order, that is not True:
// "Reason: message". Empty when Ready is True.
func whyNotReady(p *pdv1.PDPair) string {
	if meta.IsStatusConditionTrue(p.Status.Conditions, string(pdv1.PDPairReady)) {
		return ""
	}
	if len(p.Status.Conditions) == 0 {
		return "waiting for the manager to reconcile (no conditions yet)"
	}
	for _, t := range columns {
		c := meta.FindStatusCondition(p.Status.Conditions, string(t))
		if c != nil && c.Status != metav1.ConditionTrue {
			return fmt.Sprintf("%s %s: %s", t, c.Reason, shorten(c.Message))
		}
	}
	return "Ready has not been set"
}

func shorten(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	runes := []rune(msg) // messages carry "×" and "→": cut between runes
	if len(runes) <= maxMessage {
		return msg
	}
	return string(runes[:maxMessage-1]) + "…"
}

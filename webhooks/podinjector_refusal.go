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

package webhooks

import "fmt"

// RefusalReason is the stable code of an admission refusal; it starts the
// message the API server returns, so scripts can match it.
type RefusalReason string

const (
	// RefusePDPairNotFound: the pod names a PDPair that does not exist in its namespace.
	RefusePDPairNotFound RefusalReason = "PDPairNotFound"
	// RefusePDPairIncompatible: the pair's layouts cannot exchange KV cache;
	// no plan will ever exist for the pod's agent.
	RefusePDPairIncompatible RefusalReason = "PDPairIncompatible"
	// RefusePDPairNotReady: the pair's current generation has no published
	// plans (not yet planned, plans over budget, publishing failed).
	RefusePDPairNotReady RefusalReason = "PDPairNotReady"
	// RefuseInvalidRankSetting: a rank label or annotation is not a number in range.
	RefuseInvalidRankSetting RefusalReason = "InvalidRankSetting"
	// RefuseRankRangeOutOfBounds: the pod's engine ranks go past the decode
	// tensorParallelSize.
	RefuseRankRangeOutOfBounds RefusalReason = "RankRangeOutOfBounds"
	// RefuseNameConflict: the pod already uses a volume name or mount path
	// the agent needs.
	RefuseNameConflict RefusalReason = "NameConflict"
	// RefuseInvalidCurveSecret: the pod's pd.pdtopo.dev/curve-secret
	// annotation is not a Secret name.
	RefuseInvalidCurveSecret RefusalReason = "InvalidCurveSecret"
	// RefuseCurveRequired: the pod's PDPair requires CURVE
	// (pd.pdtopo.dev/require-curve) and the pod does not ask for it.
	RefuseCurveRequired RefusalReason = "CurveRequired"
	// RefuseDecodeLayoutNotServed: the pod's template pins a decode layout
	// (pd.pdtopo.dev/decode-layout) that is neither the pair's spec nor a
	// generation it still serves, or is not a layout.
	RefuseDecodeLayoutNotServed RefusalReason = "DecodeLayoutNotServed"
)

// refusal is why a decode pod is not admitted.
type refusal struct {
	reason  RefusalReason
	message string
}

func refuse(reason RefusalReason, format string, args ...any) *refusal {
	return &refusal{reason: reason, message: fmt.Sprintf(format, args...)}
}

func (r *refusal) Error() string { return string(r.reason) + ": " + r.message }

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

package engine

import (
	"errors"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/modelgeom"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// IsInputError reports whether err says the input itself cannot be used
// (a broken layout, a model config the derivation refuses, a dtype the
// engine does not store, a ConfigMap not read), as opposed to a well-formed
// pair the engine refuses (LayoutCompatible=False on a pair that could be
// fixed by another layout: TPDoesNotSplitHeads and the planner's reasons).
func IsInputError(err error) bool {
	var le *transferplan.LayoutError
	if !errors.As(err, &le) {
		return false
	}
	switch string(le.Reason) {
	case string(transferplan.ReasonInvalidLayout), string(modelgeom.ReasonInvalidModelConfig),
		string(modelgeom.ReasonUnsupportedKVCacheDtype), string(pdv1.ReasonModelConfigUnavailable):
		return true
	}
	return false
}

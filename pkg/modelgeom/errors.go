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

package modelgeom

import (
	"fmt"
	"strconv"
	"strings"
)

// Reason is a stable code for why a model cannot be derived for a layout.
// Reasons are used verbatim as Kubernetes condition reasons.
type Reason string

const (
	// ReasonInvalidModelConfig: the config is not a JSON object, is too
	// large, or a key the derivation reads is missing, not a positive
	// integer, or contradicts another; or the architecture uses a cache pool
	// the derivation does not model. Key names the config key.
	ReasonInvalidModelConfig Reason = "InvalidModelConfig"
	// ReasonUnsupportedKVCacheDtype: the KV cache dtype is not one the
	// engine's pools store. Key is kvCacheDtype.
	ReasonUnsupportedKVCacheDtype Reason = "UnsupportedKVCacheDtype"
	// ReasonTPDoesNotSplitHeads: a role's TP (per DP group) does not split
	// the model's heads the way the engine requires (num_attention_heads
	// divisible by TP; TP dividing num_key_value_heads or a multiple of it),
	// so that role's engine would refuse to start. Key names the heads.
	ReasonTPDoesNotSplitHeads Reason = "TPDoesNotSplitHeads"
)

// Reasons is every Reason the package can return, in declaration order.
func Reasons() []Reason {
	return []Reason{ReasonInvalidModelConfig, ReasonUnsupportedKVCacheDtype, ReasonTPDoesNotSplitHeads}
}

// Error says why a model cannot be derived: a stable reason, the config key
// (or spec field) concerned, what is wrong and what would fix it.
type Error struct {
	Reason Reason
	// Key is the config key ("num_key_value_heads", "text_config.head_dim")
	// or, for a dtype or a layout, the spec field ("kvCacheDtype",
	// "decode.tensorParallelSize").
	Key string
	// Field is the spec field to change when it is not the config (the
	// role's "decode.tensorParallelSize" for TPDoesNotSplitHeads); "" when
	// the config itself is at fault or Key is the field.
	Field string
	// Problem says what is wrong, with the numbers.
	Problem string
	// Fix is the change that would make the derivation succeed.
	Fix string
}

// Message is the sentence for people: the key, the problem and the fix.
func (e *Error) Message() string {
	msg := e.Key + ": " + e.Problem
	if e.Fix != "" {
		msg += ". Fix: " + e.Fix
	}
	return msg
}

func (e *Error) Error() string { return string(e.Reason) + ": " + e.Message() }

func configErrorf(key, fix, format string, args ...any) *Error {
	return &Error{Reason: ReasonInvalidModelConfig, Key: key, Problem: fmt.Sprintf(format, args...), Fix: fix}
}

// orList joins numbers as "1, 2, 4 or 8".
func orList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

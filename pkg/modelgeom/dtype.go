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
	"strings"
)

// KVCacheDtype names the element type of a KV cache. The engine stores the
// float8 types as one byte each and the 16-bit types as two.
type KVCacheDtype string

const (
	BFloat16   KVCacheDtype = "bfloat16"
	Float16    KVCacheDtype = "float16"
	Float8E4M3 KVCacheDtype = "float8_e4m3fn"
	Float8E5M2 KVCacheDtype = "float8_e5m2"
)

// dtypeKeyTag is the spec field a dtype error names.
const dtypeKeyTag = "kvCacheDtype"

// dtypeAliases are the engine's command-line spellings (--kv-cache-dtype):
// "auto" is what the engine resolves it to, bfloat16, whatever the model's
// own dtype.
var dtypeAliases = map[string]KVCacheDtype{
	"auto":     BFloat16,
	"bf16":     BFloat16,
	"fp16":     Float16,
	"half":     Float16,
	"fp8":      Float8E4M3,
	"fp8_e4m3": Float8E4M3,
	"fp8_e5m2": Float8E5M2,
}

var dtypeBytes = map[KVCacheDtype]int64{BFloat16: 2, Float16: 2, Float8E4M3: 1, Float8E5M2: 1}

// KVCacheDtypes are the canonical names, in the order people read them.
func KVCacheDtypes() []KVCacheDtype { return []KVCacheDtype{BFloat16, Float16, Float8E4M3, Float8E5M2} }

// KVCacheDtypeNames are every accepted spelling: the canonical names, then
// the engine's aliases.
func KVCacheDtypeNames() []string {
	var out []string
	for _, d := range KVCacheDtypes() {
		out = append(out, string(d))
	}
	return append(out, "auto", "bf16", "fp16", "half", "fp8", "fp8_e4m3", "fp8_e5m2")
}

// ParseKVCacheDtype resolves a dtype name or alias to its canonical name.
func ParseKVCacheDtype(s string) (KVCacheDtype, error) {
	d := KVCacheDtype(strings.ToLower(strings.TrimSpace(s)))
	if _, ok := dtypeBytes[d]; ok {
		return d, nil
	}
	if a, ok := dtypeAliases[string(d)]; ok {
		return a, nil
	}
	return "", &Error{Reason: ReasonUnsupportedKVCacheDtype, Key: dtypeKeyTag,
		Problem: fmt.Sprintf("%q is not a KV cache dtype the engine stores", s),
		Fix:     "use one of " + strings.Join(KVCacheDtypeNames(), ", ")}
}

// Bytes is the size of one element.
func (d KVCacheDtype) Bytes() int64 { return dtypeBytes[d] }

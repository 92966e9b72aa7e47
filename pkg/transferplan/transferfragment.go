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

package transferplan

import (
	"fmt"
	"strconv"
)

// TransferFragment moves bytes_per_page bytes of every page of one buffer from
// a prefill rank to a decode rank: from src_byte_offset within the prefill
// item to dst_byte_offset within the decode item. The JSON keys are the plan
// format's (docs/plan-format.md); they are also, key for key and in order, the
// v1 wire keys, which pkg/kvwire encodes for the ZMQ request.
type TransferFragment struct {
	BufferIndex        int        `json:"buffer_index"`
	BufferKind         BufferKind `json:"buffer_kind"`
	SrcRank            int        `json:"src_rank"`
	DstRank            int        `json:"dst_rank"`
	SrcPageStrideBytes int64      `json:"src_page_stride_bytes"`
	DstPageStrideBytes int64      `json:"dst_page_stride_bytes"`
	SrcByteOffset      int64      `json:"src_byte_offset"`
	DstByteOffset      int64      `json:"dst_byte_offset"`
	BytesPerPage       int64      `json:"bytes_per_page"`
	// PageCount is null on the wire when unset (always, in v1 plans).
	PageCount OptionalCount `json:"page_count"`
}

// OptionalCount is an integer that may be absent (JSON null). It is a value,
// not a pointer, so that slices of fragments hold no pointers: tens of
// thousands of them are allocated per plan set and the GC never scans them.
type OptionalCount struct {
	Value int64
	Valid bool
}

// Count returns a set OptionalCount.
func Count(n int64) OptionalCount { return OptionalCount{Value: n, Valid: true} }

// MarshalJSON writes the count or null.
func (c OptionalCount) MarshalJSON() ([]byte, error) {
	if !c.Valid {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, c.Value, 10), nil
}

// UnmarshalJSON reads an integer or null.
func (c *OptionalCount) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = OptionalCount{}
		return nil
	}
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("page_count %s is not an integer or null", b)
	}
	*c = Count(v)
	return nil
}

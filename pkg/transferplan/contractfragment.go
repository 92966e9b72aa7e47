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

// ContractFragment is one field-relative row fragment the prefill copies
// for every page of a request: rows_per_page rows, each bytes_per_row
// bytes from src_byte_offset + row*src_row_stride_bytes of the prefill's
// field page to dst_byte_offset + row*dst_row_stride_bytes of the decode's.
// The keys are the engine's (CacheTransferFragment). The prefill computes
// these itself from the registration; they are published so that people
// and tests can see what will move.
type ContractFragment struct {
	GroupID           string `json:"group_id"`
	FieldID           string `json:"field_id"`
	SrcByteOffset     int64  `json:"src_byte_offset"`
	DstByteOffset     int64  `json:"dst_byte_offset"`
	SrcRowStrideBytes int64  `json:"src_row_stride_bytes"`
	DstRowStrideBytes int64  `json:"dst_row_stride_bytes"`
	BytesPerRow       int64  `json:"bytes_per_row"`
	RowsPerPage       int64  `json:"rows_per_page"`
}

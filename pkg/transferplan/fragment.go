package transferplan

// TransferFragment moves bytes_per_page bytes of every page of one buffer from
// a prefill rank to a decode rank: from src_byte_offset within the prefill
// item to dst_byte_offset within the decode item. The JSON keys and their order
// are the v1 wire format.
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
	PageCount *int64 `json:"page_count"`
}

// wholeItem reports whether the fragment copies whole items on both sides, so
// that it stays contiguous whatever the page's internal layout.
func (f TransferFragment) wholeItem() bool {
	return f.SrcByteOffset == 0 && f.DstByteOffset == 0 &&
		f.BytesPerPage == f.SrcPageStrideBytes && f.BytesPerPage == f.DstPageStrideBytes
}

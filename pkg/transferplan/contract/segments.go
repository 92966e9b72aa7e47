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

package contract

import (
	"fmt"

	"github.com/pdtopo/pdtopo/pkg/pyjson"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// maxContractFieldBytes bounds the bytes of one field page (and any
// extent): far beyond real caches, low enough that no product overflows
// (the bound of a v1 item, 1 TiB).
const maxContractFieldBytes = 1 << 40

// contractSegment is one field both roles transfer (a prefill field and the
// decode field of the same id in the same group), with the integers the
// planner computes with.
type contractSegment struct {
	groupID, fieldID string
	prefillShape     []int64
	decodeShape      []int64
	elemBytes        int64
	partitioned      bool
	axis             int
	globalExtent     int64
	// parts are the global parts (one part, the global extent, when the
	// partition names none).
	parts []int64
}

func (s *contractSegment) prefillPayload() int64 { return product(s.prefillShape) * s.elemBytes }
func (s *contractSegment) decodePayload() int64  { return product(s.decodeShape) * s.elemBytes }

func product(xs []int64) int64 {
	p := int64(1)
	for _, x := range xs {
		p *= x
	}
	return p
}

// innerBytes are the bytes of one unit of the partition axis (the product
// of the later dimensions, in elements of the field's dtype).
func (s *contractSegment) innerBytes() int64 { return product(s.prefillShape[s.axis+1:]) * s.elemBytes }

// rowsPerPage is the product of the dimensions before the partition axis:
// how many separate rows of the axis one page holds.
func (s *contractSegment) rowsPerPage() int64 { return product(s.prefillShape[:s.axis]) }

// distinctShards is global extent // local extent on a role whose
// rank-local shape is shape.
func (s *contractSegment) distinctShards(shape []int64) int64 { return s.globalExtent / shape[s.axis] }

// contractSegments pairs the fields of the two contracts as the engine
// walks them (group by group, fields in id order), converts each to
// integers, refusing values no transfer can use, and runs check on each in
// turn (the engine's per-field TP mapping checks).
func contractSegments(prefill, decode *CacheContract, check func(*contractSegment) error) ([]contractSegment, error) {
	var out []contractSegment
	for i := range prefill.groupSpecs {
		pf, _ := prefill.fieldsForGroup(prefill.groupSpecs[i].groupID)
		df, _ := decode.fieldsForGroup(decode.groupSpecs[i].groupID)
		for k := range pf {
			seg, err := typedSegment(prefill, pf[k], df[k])
			if err != nil {
				return nil, err
			}
			if err := check(&seg); err != nil {
				return nil, err
			}
			out = append(out, seg)
		}
	}
	return out, nil
}

func typedSegment(prefill *CacheContract, pf, df contractField) (contractSegment, error) {
	if pf.groupID.Kind() != pyjson.Str || pf.fieldID.Kind() != pyjson.Str {
		return contractSegment{}, transferplan.LayoutErrorf(transferplan.ReasonContractUnsupportedValue, "plan.fields "+pf.fieldID.Repr(),
			"field %s of group %s: group and field ids must be strings", pf.fieldID.Repr(), pf.groupID.Repr())
	}
	seg := contractSegment{groupID: pf.groupID.Text(), fieldID: pf.fieldID.Text(), elemBytes: contractDTypeBytes[pf.dtype]}
	var err error
	if seg.prefillShape, err = typedShape(pf, "prefill"); err != nil {
		return seg, err
	}
	if seg.decodeShape, err = typedShape(df, "decode"); err != nil {
		return seg, err
	}
	p, ok := prefill.partitionFor(pf.fieldID)
	if !ok {
		return seg, nil
	}
	seg.partitioned, seg.axis = true, p.axis
	if seg.globalExtent, ok = boundedInt(p.globalExtent); !ok {
		return seg, unsupported(pf, "global_extent %s", p.globalExtent.Repr())
	}
	seg.parts = []int64{seg.globalExtent}
	if len(p.globalParts) > 0 {
		seg.parts = seg.parts[:0]
		for _, v := range p.globalParts {
			n, ok := boundedInt(v)
			if !ok {
				return seg, unsupported(pf, "global part %s", v.Repr())
			}
			seg.parts = append(seg.parts, n)
		}
	}
	return seg, nil
}

func unsupported(f contractField, format string, args ...any) *transferplan.LayoutError {
	return transferplan.LayoutErrorf(transferplan.ReasonContractUnsupportedValue, "plan.fields "+f.fieldID.Repr(),
		"field %s: %s; pdtopo plans integers from 1 to %d", f.fieldID.Repr(), fmt.Sprintf(format, args...), int64(maxContractFieldBytes))
}

// boundedInt is an int in [1, maxContractFieldBytes].
func boundedInt(v pyjson.Value) (int64, bool) {
	n, ok := v.Int64()
	return n, ok && n >= 1 && n <= maxContractFieldBytes
}

// typedShape converts a rank-local shape: positive integers whose page,
// in the field's dtype, stays within maxContractFieldBytes.
func typedShape(f contractField, role string) ([]int64, error) {
	out := make([]int64, len(f.shape))
	total := contractDTypeBytes[f.dtype]
	for i, v := range f.shape {
		n, ok := boundedInt(v)
		if !ok || total > maxContractFieldBytes/n {
			return nil, unsupported(f, "the %s shape %s is not made of positive integers holding at most %d bytes", role, pyjson.ReprList(f.shape), int64(maxContractFieldBytes))
		}
		out[i] = n
		total *= n
	}
	return out, nil
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

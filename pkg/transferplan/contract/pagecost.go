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

	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// pageCost finds the contract fragment that copies the most rows per page:
// each row of a page is one copy.
type pageCost struct {
	mostRows int64
	rowsAt   transferplan.ContractFragment
}

func (z *pageCost) Add(plan *transferplan.RoutePlan) {
	for _, t := range plan.Targets {
		for _, f := range t.ContractFragments {
			if f.RowsPerPage > z.mostRows {
				z.mostRows, z.rowsAt = f.RowsPerPage, f
			}
		}
	}
}

// Cost says how many copies a contract fragment costs per page.
func (z *pageCost) Cost() (int, string) {
	f := z.rowsAt
	switch z.mostRows {
	case 0:
		return 0, "whole fields: each prefill rank copies its fields' pages whole, no fragments"
	case 1:
		return 1, "1 copy per page for each field fragment a decode rank pulls from a prefill rank: every slice is whole rows on both sides"
	default:
		return int(z.mostRows), fmt.Sprintf("%d copies per page for each field fragment a decode rank pulls from a prefill rank: "+
			"field %q takes %d of every %d-byte row of the prefill's page into %d-byte rows, for each of the %d rows of a page",
			z.mostRows, f.FieldID, f.BytesPerRow, f.SrcRowStrideBytes, f.DstRowStrideBytes, z.mostRows)
	}
}

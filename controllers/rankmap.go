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

package controllers

import (
	"fmt"
	"strconv"
	"strings"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/engine"
)

// rankMapStatus is status.rankMap of an engine's mapping: the reads of
// every decode rank counted, the first RankMapReadsShown written out.
func rankMapStatus(m engine.RankMap) (*pdv1.RankMapStatus, error) {
	n := m.DecodeRanks()
	st := &pdv1.RankMapStatus{DecodeRanks: int32(n)}
	for d := range n {
		read, err := m.PrefillRanks(d)
		if err != nil {
			return nil, err
		}
		if reads := int32(len(read)); d == 0 || reads < st.MinReadsPerDecodeRank {
			st.MinReadsPerDecodeRank = reads
		}
		st.MaxReadsPerDecodeRank = max(st.MaxReadsPerDecodeRank, int32(len(read)))
		if d < pdv1.RankMapReadsShown {
			st.Reads = append(st.Reads, readsLine(d, read))
		}
	}
	st.MoreDecodeRanks = int32(max(0, n-pdv1.RankMapReadsShown))
	return st, nil
}

// readsLine is "decode D reads prefill 0-3,6", at most 256 bytes (the
// API's bound): a longer list ends in "… (N ranks)".
func readsLine(d int, ranks []int) string {
	head := fmt.Sprintf("decode %d reads prefill ", d)
	if len(ranks) == 0 {
		return fmt.Sprintf("decode %d reads no prefill rank", d)
	}
	runs := rankRuns(ranks)
	if len(head)+len(runs) > 256 {
		tail := fmt.Sprintf("… (%d ranks)", len(ranks))
		cut := strings.LastIndexByte(runs[:256-len(head)-len(tail)], ',')
		runs = runs[:cut+1] + tail
	}
	return head + runs
}

// rankRuns writes ranks with runs of consecutive ranks as "a-b".
func rankRuns(ranks []int) string {
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ranks[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ranks[j]))
		}
		i = j + 1
	}
	return b.String()
}

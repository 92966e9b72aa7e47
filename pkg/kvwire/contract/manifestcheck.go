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

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

// ManifestSummary is what a checked manifest holds, for logs and metrics.
type ManifestSummary struct {
	PrefixLen, PromptLen int64
	Groups, Blocks       int
}

// ValidateManifest parses a manifest's wire bytes (as DecodeManifest does,
// without building it) and checks it against the decode rank's layout the
// way the engine's validate_cache_manifest does, in its order:
// prefix_len < prompt_len; the groups are the layout's, in order;
// prefix_len is a multiple of the prefix granularity; each group has the
// number of blocks its policy selects; every block id lies in
// [1, page_count). A refusal is an *Error with a Manifest… reason naming
// the group and the numbers. The bytes are read once, in place.
func ValidateManifest(raw []byte, layout *ManifestLayout) (ManifestSummary, error) {
	s := manifestScan{raw: raw, keep: len(layout.Groups) + 1}
	if err := s.run(); err != nil {
		return ManifestSummary{}, err
	}
	return layout.check(&s)
}

// Check checks a parsed manifest against the layout, as ValidateManifest
// checks its bytes. It does not check that m encodes within
// MaxManifestBytes (WireBytes does).
func (l *ManifestLayout) Check(m *Manifest) error {
	s := manifestScan{prefixLen: m.PrefixLen, promptLen: m.PromptLen, groupCount: len(m.Groups)}
	if m.PrefixLen < 0 {
		return kvwire.FieldError(kvwire.KindManifest, "prefix_len", kvwire.ReasonOutOfRange, "%d is negative", m.PrefixLen)
	}
	for i, g := range m.Groups {
		if i > len(l.Groups) {
			break
		}
		sg := scannedGroup{id: g.GroupID, count: len(g.BlockIDs)}
		for k, id := range g.BlockIDs {
			if k == 0 || id < sg.min {
				sg.min, sg.minAt = id, k
			}
			if k == 0 || id > sg.max {
				sg.max, sg.maxAt = id, k
			}
		}
		s.groups = append(s.groups, sg)
		s.blocks += len(g.BlockIDs)
	}
	_, err := l.check(&s)
	return err
}

func (l *ManifestLayout) check(s *manifestScan) (ManifestSummary, error) {
	sum := ManifestSummary{PrefixLen: s.prefixLen, PromptLen: s.promptLen, Groups: s.groupCount, Blocks: s.blocks}
	if s.prefixLen >= s.promptLen {
		return sum, kvwire.FieldError(kvwire.KindManifest, "prefix_len", kvwire.ReasonManifestPrefixNotBeforePrompt, "prefix_len %d is not below prompt_len %d", s.prefixLen, s.promptLen)
	}
	if err := l.checkGroupOrder(s); err != nil {
		return sum, err
	}
	if s.prefixLen%l.PrefixGranularity != 0 {
		return sum, kvwire.FieldError(kvwire.KindManifest, "prefix_len", kvwire.ReasonManifestPrefixUnaligned, "prefix_len %d is not a multiple of the decode contract's prefix_granularity %d", s.prefixLen, l.PrefixGranularity)
	}
	for i := range l.Groups {
		rule, g := &l.Groups[i], &s.groups[i]
		field := fmt.Sprintf("groups[%d].block_ids", i)
		if want := rule.SlotCount(s.prefixLen, s.promptLen); int64(g.count) != want {
			return sum, kvwire.FieldError(kvwire.KindManifest, field, kvwire.ReasonManifestBlockCount,
				"group %q has %d blocks; its %s policy selects %d for prefix_len %d, prompt_len %d (block granularity %d%s)",
				rule.GroupID, g.count, policyName(rule.Policy), want, s.prefixLen, s.promptLen, rule.BlockGranularity, windowNote(rule))
		}
		if g.count == 0 {
			continue
		}
		if g.min <= 0 {
			return sum, kvwire.FieldError(kvwire.KindManifest, fmt.Sprintf("%s[%d]", field, g.minAt), kvwire.ReasonManifestBlockOutsideArena,
				"group %q block id %d is outside the decode arena's pages [1, %d)", rule.GroupID, g.min, rule.PageCount)
		}
		if g.max >= rule.PageCount {
			return sum, kvwire.FieldError(kvwire.KindManifest, fmt.Sprintf("%s[%d]", field, g.maxAt), kvwire.ReasonManifestBlockOutsideArena,
				"group %q block id %d is outside the decode arena's pages [1, %d)", rule.GroupID, g.max, rule.PageCount)
		}
	}
	return sum, nil
}

func (l *ManifestLayout) checkGroupOrder(s *manifestScan) error {
	for i := range min(len(l.Groups), len(s.groups)) {
		if s.groups[i].id != l.Groups[i].GroupID {
			return kvwire.FieldError(kvwire.KindManifest, fmt.Sprintf("groups[%d].group_id", i), kvwire.ReasonManifestGroupOrder,
				"%q where the decode contract's group %d is %q (%s)", s.groups[i].id, i, l.Groups[i].GroupID, l.groupIDs())
		}
	}
	if s.groupCount != len(l.Groups) {
		return kvwire.FieldError(kvwire.KindManifest, "groups", kvwire.ReasonManifestGroupOrder,
			"%d groups; the decode contract has %d (%s)", s.groupCount, len(l.Groups), l.groupIDs())
	}
	return nil
}

func (l *ManifestLayout) groupIDs() string {
	ids := make([]string, len(l.Groups))
	for i, g := range l.Groups {
		ids[i] = g.GroupID
	}
	return fmt.Sprintf("%q", ids)
}

func policyName(p string) string {
	if p == "" {
		return "null"
	}
	return p
}

func windowNote(r *ManifestGroupRule) string {
	if r.SlidingWindowTokens > 0 && r.Policy == PolicyFullSuffix {
		return fmt.Sprintf(", sliding window %d", r.SlidingWindowTokens)
	}
	return ""
}

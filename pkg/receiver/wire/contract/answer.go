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
	"strings"

	kvcontract "github.com/pdtopo/pdtopo/pkg/kvwire/contract"
	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	plancontract "github.com/pdtopo/pdtopo/pkg/transferplan/contract"
)

// checkContractAnswer holds a contract-era bootstrap answer to the plan:
// the prefill's parallelism, then its contract, which must decode as the
// engine decodes it and hash to the plan's prefillContractSHA256. A
// contract that does not says what differs: the engine's own verdict on
// the pair when it refuses it, else the first field in which it differs
// from the plan's contract (when a prefill served that one), else the two
// hashes.
func (w *Wire) checkContractAnswer(h wire.Host, view wire.View, addr string, ans *kvcontract.ParallelInfo) (*wire.PrefillInfo, *wire.RoomFailure) {
	rec := view.Layout()
	mismatch := func(reason wire.FailureReason, format string, args ...any) (*wire.PrefillInfo, *wire.RoomFailure) {
		return nil, &wire.RoomFailure{Reason: reason, Message: fmt.Sprintf("prefill at %s does not match the plan (%s): ", addr, wire.ShortHash(view.PlanHash())) + fmt.Sprintf(format, args...)}
	}
	var sizes []string
	if ans.PrefillTPSize != rec.Prefill.TPSize {
		sizes = append(sizes, fmt.Sprintf("prefill_tp_size is %d, the plan was made for prefill tensorParallelSize %d", ans.PrefillTPSize, rec.Prefill.TPSize))
	}
	if ans.PrefillDPSize != rec.Prefill.DPSize {
		sizes = append(sizes, fmt.Sprintf("prefill_dp_size is %d, the plan was made for prefill dataParallelSize %d", ans.PrefillDPSize, rec.Prefill.DPSize))
	}
	if len(sizes) > 0 {
		return mismatch(wire.ReasonLayoutMismatch, "%s", strings.Join(sizes, "; "))
	}
	live, err := plancontract.Parse(ans.CacheLayout)
	if err != nil {
		return nil, &wire.RoomFailure{Reason: wire.ReasonParallelInfoUnavailable, Message: fmt.Sprintf("the cache_layout the bootstrap server at %s answered does not decode as the engine decodes a contract: %v", addr, err)}
	}
	sha := live.SHA256()
	if sha == rec.PrefillContractSHA256 {
		served := &servedContract{canonical: w.rememberPlannedPrefill(live.Canonical()), sha: sha}
		return &wire.PrefillInfo{TPSize: ans.PrefillTPSize, DPSize: ans.PrefillDPSize, Served: served}, nil
	}
	return mismatch(wire.ReasonContractMismatch, "%s", w.describeContractMismatch(h, view, live))
}

// describeContractMismatch says how a live prefill contract that is not
// the plan's differs.
func (w *Wire) describeContractMismatch(h wire.Host, view wire.View, live *plancontract.CacheContract) string {
	rec := view.Layout()
	hashes := fmt.Sprintf("(prefillContractSHA256: the plan's %s, the prefill's %s)", wire.ShortHash(rec.PrefillContractSHA256), wire.ShortHash(live.SHA256()))
	if ec := registeredContract(h.Engine()); ec != nil {
		_, err := plancontract.NewPlanner(plancontract.Pair{Prefill: rec.Prefill, Decode: rec.Decode,
			PrefillContract: live, DecodeContract: ec.decoded})
		if err != nil {
			return fmt.Sprintf("the engine refuses its cache contract with this decode's: %v %s", err, hashes)
		}
	}
	if planned := w.plannedPrefill.Load(); planned != nil {
		if d, found, err := kvcontract.FirstDifference(*planned, live.Canonical()); err == nil && found {
			return fmt.Sprintf("its cache contract differs from the one the plan was made for: %s is %s in the plan's contract, %s in the prefill's %s", d.Field, d.A, d.B, hashes)
		}
	}
	return fmt.Sprintf("its cache contract is not the one the plan was made for %s; the two still plan together, but the published plan does not describe this prefill: publish its contract (the bootstrap server's cache_layout) in the PDPair's spec.cacheContracts.prefill", hashes)
}

// servedContract is what a contract address answered when its ranks were
// registered: the contract (canonical, shared with the wire's
// plannedPrefill) and its SHA-256.
type servedContract struct {
	canonical []byte
	sha       string
}

// registeredContract is the engine's contract, when the engine registered
// on the contract wire.
func registeredContract(engine any) *engineContract {
	ec, _ := engine.(*engineContract)
	return ec
}

// contractChange says what changed between the answer a live address gave
// when it was bootstrapped (info) and its answer now, or "" when nothing
// did. reason is ReasonWireMismatch when it now speaks the v1 wire.
func contractChange(addr string, info *wire.PrefillInfo, now *wire.Answer) (wire.FailureReason, string) {
	c, ok := now.Value.(*kvcontract.ParallelInfo)
	if !ok {
		return wire.ReasonWireMismatch, fmt.Sprintf("the bootstrap server at %s now answers the v1 wire (item lengths, no cache_layout); it answered a cache contract when the room's ranks were registered", addr)
	}
	was := info.Served.(*servedContract)
	if c.PrefillTPSize != info.TPSize || c.PrefillDPSize != info.DPSize {
		return wire.ReasonContractChanged, fmt.Sprintf("the bootstrap server at %s now answers prefill_tp_size %d and prefill_dp_size %d; it answered %d and %d when the room's ranks were registered",
			addr, c.PrefillTPSize, c.PrefillDPSize, info.TPSize, info.DPSize)
	}
	live, err := plancontract.Parse(c.CacheLayout)
	if err != nil {
		return wire.ReasonContractChanged, fmt.Sprintf("the bootstrap server at %s now answers a cache_layout that does not decode (%v); it answered the contract %s when the room's ranks were registered", addr, err, wire.ShortHash(was.sha))
	}
	if live.SHA256() == was.sha {
		return "", ""
	}
	what := "its cache contract changed"
	if d, found, err := kvcontract.FirstDifference(was.canonical, live.Canonical()); err == nil && found {
		what = fmt.Sprintf("%s was %s, is now %s", d.Field, d.A, d.B)
	}
	return wire.ReasonContractChanged, fmt.Sprintf("the prefill at %s changed its cache contract while the room was open: %s (SHA-256 %s, now %s); its ranks no longer plan with the registration the room was sent under",
		addr, what, wire.ShortHash(was.sha), wire.ShortHash(live.SHA256()))
}

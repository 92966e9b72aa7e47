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

package receiver

import (
	"context"

	"github.com/pdtopo/pdtopo/pkg/receiver/wire"
	"github.com/pdtopo/pdtopo/pkg/transferplan"
)

// wireHost is the Manager as its wires see it (wire.Host): a conversion of
// the pointer, so asking a wire costs no allocation.
type wireHost Manager

func (m *Manager) host() wire.Host { return (*wireHost)(m) }

func (h *wireHost) AdvertiseHost() string { return h.cfg.AdvertiseHost }
func (h *wireHost) StatusPort() int       { return h.status.port }
func (h *wireHost) Push() *wire.PushPool  { return h.push }
func (h *wireHost) FailRoom(r wire.Room, reason FailureReason, message string) {
	(*Manager)(h).failRoom(r.(*roomEntry), reason, message)
}
func (h *wireHost) Health(ctx context.Context, addr string) error { return h.boot.health(ctx, addr) }
func (h *wireHost) Answer(ctx context.Context, addr string) (wire.Answer, error) {
	return h.boot.bootstrapAnswer(ctx, addr)
}
func (h *wireHost) Engine() any {
	if reg := h.engine.Load(); reg != nil {
		return reg.engine
	}
	return nil
}

// A route view as its wire reads it (wire.View).
func (v *routeView) Plan() *transferplan.RoutePlan      { return &v.snap.Plan }
func (v *routeView) Layout() *transferplan.LayoutRecord { return &v.snap.Layout }
func (v *routeView) PlanHash() string                   { return v.snap.Hash }
func (v *routeView) NumSends() int                      { return len(v.sends) }
func (v *routeView) Target(i int) wire.Target {
	t := &v.sends[i]
	return wire.Target{Rank: t.rank, Dummy: t.dummy, DstInfo: t.dstInfo}
}
func (v *routeView) RequiredResponses() int { return v.required }
func (v *routeView) ExpectedResponses() int { return v.expected }
func (v *routeView) FragmentsFit(info *EngineInfo) error {
	return checkFragmentsFit(*info, v)
}

// A room as its wire sends it (wire.Room).
func (e *roomEntry) RoomID() int64         { return e.id }
func (e *roomEntry) DPGroup() int          { return e.group }
func (e *roomEntry) BootstrapAddr() string { return e.addr }
func (e *roomEntry) Endpoint(i int) string { return e.endpoints[i] }
func (e *roomEntry) Session() string       { return e.reg.SessionID }
func (e *roomEntry) EngineState() any      { return e.reg.engine }
func (e *roomEntry) RouteView() wire.View  { return e.view }

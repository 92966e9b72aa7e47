// Package transferplan computes, for a prefill fleet and a decode fleet with
// possibly different tensor/data-parallel layouts, which prefill ranks every
// decode rank pulls KV cache and recurrent state from and which byte ranges of
// each page come from where.
//
// It gives the answers of the reference engine (tokenspeed's transfer_plan.py
// and the route planning of its Mooncake receiver) wherever the reference is
// right, and fixes its known faults: non-divisible MLA ratios never name a rank
// that does not exist, prefill ranks that nobody pulls from are reported so
// that decode TP rank 0 can release them, fan-out is computed once per layout,
// and pages of several tokens are planned token-major (one fragment per token
// row where a decode rank takes part of each row), where the reference plans
// them as head-major and moves the wrong bytes.
//
// The package knows nothing of Kubernetes, ZMQ or HTTP: it takes values and
// returns values or *LayoutError (docs/design.md; internal/repolint keeps it
// so). pkg/kvwire puts its fragments on the wire.
package transferplan

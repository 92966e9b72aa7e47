// Package scale holds the operator's scale test: many PDPairs applied at
// once to a real API server, reconciled by the real manager binary, measured
// for wall time, reconciles per object and the manager's peak memory.
// It runs only with PDTOPO_SCALE=1 (`make bench-scale`); results are
// recorded in docs/benchmarks.md.
package scale

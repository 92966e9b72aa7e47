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

// Package cli holds what every verb of the pdtopo command line shares: the
// exit statuses and the error that carries one, the verbs' environment (the
// kubectl flags, the streams, the plan budget), the connection to a cluster
// and the reader of PDPair manifests.
package cli

import (
	"errors"
	"fmt"
)

// Exit codes: scripts tell a broken manifest from an incompatible layout,
// from a cluster that cannot be read and from plans too large to make. These
// are all the codes the command exits with; docs/kubectl-plugin.md's table
// lists them (a test holds the two together).
const (
	ExitOK           = 0
	ExitUsage        = 2 // unreadable, missing or structurally invalid input (file or PDPair), bad flags
	ExitIncompatible = 3 // the layouts cannot exchange KV cache
	ExitCluster      = 4 // the cluster (or, for contract, a live engine) could not be read
	ExitTooLarge     = 5 // the plans would pass the plan budget (--max-plan-fragments…)
)

// ExitError carries an exit code up to the root command; its message is
// printed on standard error prefixed with the command's path.
type ExitError struct {
	Code int
	Msg  string
	// Quiet: the output already said it (an incompatible verdict), print nothing.
	Quiet bool
}

func (e *ExitError) Error() string { return e.Msg }

// Exitf is an error ending the command with code.
func Exitf(code int, format string, args ...any) error {
	return &ExitError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// UsageErrorf is an error ending the command with ExitUsage.
func UsageErrorf(format string, args ...any) error {
	return Exitf(ExitUsage, format, args...)
}

// UsageError ends the command with ExitUsage and err's message.
func UsageError(err error) error { return &ExitError{Code: ExitUsage, Msg: err.Error()} }

// ClusterErrorf is an error ending the command with ExitCluster.
func ClusterErrorf(format string, args ...any) error {
	return Exitf(ExitCluster, format, args...)
}

// ErrIncompatible ends a command whose output has reported an incompatible layout.
var ErrIncompatible = &ExitError{Code: ExitIncompatible, Quiet: true}

// AsExit returns err's ExitError when it carries an exit code.
func AsExit(err error) (*ExitError, bool) {
	var ee *ExitError
	return ee, errors.As(err, &ee)
}

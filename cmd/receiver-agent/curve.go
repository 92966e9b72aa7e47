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

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// The files of --curve-keys: a Secret's keys, mounted as a directory.
const (
	curveAgentKeyFile   = "agent.key"   // the agent's secret key
	curvePrefillPubFile = "prefill.pub" // the prefill fleet's public key
)

// loadCurveKeys reads --curve-keys (nothing when it is not given).
func (o *options) loadCurveKeys() error {
	if o.curveKeys == "" {
		return nil
	}
	read := func(name string) (string, error) {
		raw, err := os.ReadFile(filepath.Join(o.curveKeys, name))
		if err != nil {
			return "", fmt.Errorf("--curve-keys: %w", err)
		}
		return strings.TrimSpace(string(raw)), nil
	}
	secret, err := read(curveAgentKeyFile)
	if err != nil {
		return err
	}
	prefill, err := read(curvePrefillPubFile)
	if err != nil {
		return err
	}
	keys, err := receiver.NewCurveKeys(secret, prefill)
	if err != nil {
		return fmt.Errorf("--curve-keys %s: %w", o.curveKeys, err)
	}
	o.curve = &keys
	return nil
}

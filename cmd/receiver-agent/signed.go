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
	"errors"
	"os"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
)

// validateSigned checks the signed-plans flags: all three go with
// --plan-dir, and keys need the pair they sign for.
func (o *options) validateSigned() error {
	switch {
	case o.planPublicKeys == "" && (o.planPDPair != "" || o.planMinGeneration != 0):
		return errors.New("--plan-pdpair and --plan-min-generation are only used with --plan-public-keys")
	case o.planPublicKeys == "":
		return nil
	case o.planDir == "":
		return errors.New("--plan-public-keys is only used with --plan-dir")
	case o.planSealDir != "":
		return errors.New("give --plan-public-keys or --plan-seal-dir, not both")
	case o.planPDPair == "":
		return errors.New("--plan-public-keys needs --plan-pdpair, the pair the plans must be signed for")
	case o.planMinGeneration < 0:
		return errors.New("--plan-min-generation must not be negative")
	}
	if _, err := planstore.ParsePublicKeys(o.planPublicKeys); err != nil {
		return err
	}
	_, _, err := plansource.ParsePDPair(o.planPDPair, os.Getenv(plansource.NamespaceEnv))
	return err
}

// signed is the plan directory's signature check, nil without keys.
func (o *options) signed() (*plansource.Signed, error) {
	if o.planPublicKeys == "" {
		return nil, nil
	}
	keys, err := planstore.ParsePublicKeys(o.planPublicKeys)
	if err != nil {
		return nil, err
	}
	ns, name, err := plansource.ParsePDPair(o.planPDPair, os.Getenv(plansource.NamespaceEnv))
	if err != nil {
		return nil, err
	}
	return plansource.NewSigned(keys, ns, name, o.planMinGeneration), nil
}

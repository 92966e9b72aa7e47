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
	"fmt"
	"os"

	"github.com/pdtopo/pdtopo/pkg/planstore"
	"github.com/pdtopo/pdtopo/pkg/receiver/plansource"
)

// validateSigned checks the signed-plans flags: all three go with
// --plan-dir or --pdpair, and keys need the pair they sign for (with
// --pdpair, that pair unless --plan-pdpair names it too).
func (o *options) validateSigned() error {
	switch {
	case o.planPublicKeys == "" && (o.planPDPair != "" || o.planMinGeneration != 0):
		return errors.New("--plan-pdpair and --plan-min-generation are only used with --plan-public-keys")
	case o.planPublicKeys == "":
		return nil
	case o.planDir == "" && o.pdpair == "":
		return errors.New("--plan-public-keys is only used with --plan-dir or --pdpair")
	case o.planSealDir != "":
		return errors.New("give --plan-public-keys or --plan-seal-dir, not both")
	case o.signedPDPair() == "":
		return errors.New("--plan-public-keys needs --plan-pdpair, the pair the plans must be signed for")
	case o.planMinGeneration < 0:
		return errors.New("--plan-min-generation must not be negative")
	}
	if _, err := planstore.ParsePublicKeys(o.planPublicKeys); err != nil {
		return err
	}
	ns, name, err := plansource.ParsePDPair(o.signedPDPair(), os.Getenv(plansource.NamespaceEnv))
	if err != nil || o.pdpair == "" || o.planPDPair == "" {
		return err
	}
	// Both given: plans read from one pair must be signed for that pair.
	if rns, rname, rerr := plansource.ParsePDPair(o.pdpair, os.Getenv(plansource.NamespaceEnv)); rerr != nil || rns != ns || rname != name {
		return fmt.Errorf("--plan-pdpair %s/%s is not the pair --pdpair %q reads", ns, name, o.pdpair)
	}
	return nil
}

// signedPDPair is the pair signed plans must be for: --plan-pdpair, or
// with --pdpair the pair it reads.
func (o *options) signedPDPair() string {
	if o.planPDPair == "" && o.planDir == "" {
		return o.pdpair
	}
	return o.planPDPair
}

// signed is the plans' signature check (the directory's or the API
// source's), nil without keys.
func (o *options) signed() (*plansource.Signed, error) {
	if o.planPublicKeys == "" {
		return nil, nil
	}
	keys, err := planstore.ParsePublicKeys(o.planPublicKeys)
	if err != nil {
		return nil, err
	}
	ns, name, err := plansource.ParsePDPair(o.signedPDPair(), os.Getenv(plansource.NamespaceEnv))
	if err != nil {
		return nil, err
	}
	return plansource.NewSigned(keys, ns, name, o.planMinGeneration), nil
}

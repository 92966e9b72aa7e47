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
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// The signing key Secret: the seed signs, the webhook passes its public
// key and those still accepted (a rotation), and a broken Secret is refused
// at start, naming the key.
func TestKeysOfSigningSecret(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 7
	old := planstore.EncodePublicKey(ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize)).Public().(ed25519.PublicKey))
	sec := &corev1.Secret{Data: map[string][]byte{
		signingKeyKey:   []byte(base64.StdEncoding.EncodeToString(seed)),
		acceptedKeysKey: []byte(old),
	}}
	keys, err := keysOfSecret(sec)
	if err != nil {
		t.Fatal(err)
	}
	want := planstore.EncodePublicKey(ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey))
	if len(keys.accepted) != 2 || keys.accepted[0] != want || keys.accepted[1] != old {
		t.Fatalf("accepted %v, want %s then %s", keys.accepted, want, old)
	}
	if _, err := planstore.ParsePublicKeys(strings.Join(keys.accepted, ",")); err != nil {
		t.Fatalf("the agent cannot parse what the webhook passes: %v", err)
	}
	for name, data := range map[string]map[string][]byte{
		"no seed":      {},
		"short seed":   {signingKeyKey: []byte("AAAA")},
		"bad accepted": {signingKeyKey: sec.Data[signingKeyKey], acceptedKeysKey: []byte("nope")},
	} {
		if _, err := keysOfSecret(&corev1.Secret{Data: data}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

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
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// The plan signing key: one ed25519 key, in a Secret of the manager's own
// namespace, created on first start. The manager signs every published
// index with it (controllers/sign.go) and the webhook passes its public key
// (and any still accepted, see rotation in docs/plan-format.md) to every
// decode agent. This Secret is the only one the PDPair controller touches:
// get and create, in the manager's namespace only.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=get;create

// Keys of the signing key Secret.
const (
	// signingKeyKey holds the base64 32-byte ed25519 seed.
	signingKeyKey = "ed25519.seed"
	// acceptedKeysKey optionally holds comma-separated base64 public keys
	// agents still accept (the previous key while decode pods roll).
	acceptedKeysKey = "accepted.pub"
)

// signingOptions are the signing key's flags.
type signingOptions struct {
	secret, namespace string
}

func (s *signingOptions) bindFlags(fs *flag.FlagSet) {
	fs.StringVar(&s.secret, "signing-key-secret", "pdtopo-plan-signing-key",
		"Secret (in --signing-key-namespace) holding the ed25519 key plan indexes are signed with; created when missing; empty: publish unsigned plans")
	fs.StringVar(&s.namespace, "signing-key-namespace", "",
		"namespace of --signing-key-secret (default: $POD_NAMESPACE, then the service account's namespace; none outside a cluster: unsigned)")
}

// planKeys are the signer and the public keys the webhook gives agents.
type planKeys struct {
	signer   *planstore.Signer
	accepted []string
}

// load reads (or creates) the signing key Secret. Without a namespace or a
// secret name there is no key and plans are published unsigned.
func (s *signingOptions) load(ctx context.Context, cfg *rest.Config) (*planKeys, error) {
	ns := s.namespace
	if ns == "" {
		ns = inClusterNamespace()
	}
	if s.secret == "" || ns == "" {
		return nil, nil
	}
	c, err := client.New(cfg, client.Options{}) // before the manager's cache runs
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: ns, Name: s.secret}
	var sec corev1.Secret
	err = c.Get(ctx, key, &sec)
	if apierrors.IsNotFound(err) {
		err = createSigningKey(ctx, c, key)
		if err == nil || apierrors.IsAlreadyExists(err) { // another replica may have won
			err = c.Get(ctx, key, &sec)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the plan signing key Secret %s: %w", key, err)
	}
	return keysOfSecret(&sec)
}

func createSigningKey(ctx context.Context, c client.Client, key types.NamespacedName) error {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := rand.Read(seed); err != nil {
		return err
	}
	return c.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{pdv1.LabelManagedBy: pdv1.ManagerName}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{signingKeyKey: []byte(base64.StdEncoding.EncodeToString(seed))},
	})
}

func keysOfSecret(sec *corev1.Secret) (*planKeys, error) {
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sec.Data[signingKeyKey])))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("the plan signing key Secret %s/%s: %s is not a base64 %d-byte ed25519 seed", sec.Namespace, sec.Name, signingKeyKey, ed25519.SeedSize)
	}
	signer := planstore.NewSigner(ed25519.NewKeyFromSeed(seed))
	keys := &planKeys{signer: signer, accepted: []string{planstore.EncodePublicKey(signer.PublicKey())}}
	if extra := strings.TrimSpace(string(sec.Data[acceptedKeysKey])); extra != "" {
		if _, err := planstore.ParsePublicKeys(extra); err != nil {
			return nil, fmt.Errorf("the plan signing key Secret %s/%s, %s: %w", sec.Namespace, sec.Name, acceptedKeysKey, err)
		}
		keys.accepted = append(keys.accepted, strings.Split(extra, ",")...)
	}
	return keys, nil
}

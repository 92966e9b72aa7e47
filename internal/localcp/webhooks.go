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

package localcp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pdtopo/pdtopo/internal/controlplane"
)

// localWebhooks is the admission side of `make run`. In a cluster the API
// server reaches the manager's webhooks through a Service, with a
// certificate the manager rotates itself; here there is no Service, so the
// session makes a local CA and a serving certificate for 127.0.0.1, runs the
// manager with --webhook-certs=files on a loopback port, and installs the
// webhook configurations of config/webhook with a URL client config and
// that CA as caBundle.
type localWebhooks struct {
	certDir string
	port    int
	caPEM   []byte
}

// newLocalWebhooks writes a fresh CA and serving certificate into a
// temporary directory and picks the port.
func newLocalWebhooks() (*localWebhooks, error) {
	dir, err := os.MkdirTemp("", "pdtopo-webhook-certs-")
	if err != nil {
		return nil, err
	}
	w := &localWebhooks{certDir: dir}
	if err := w.writeCertificates(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("making the local webhook certificates: %w", err)
	}
	ports, err := controlplane.FreeLoopbackPorts(1)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("choosing the webhook port: %w", err)
	}
	w.port = ports[0]
	return w, nil
}

// writeCertificates makes a CA valid for a day (a session is a working
// day at most) and a serving certificate for 127.0.0.1 signed by it.
func (w *localWebhooks) writeCertificates() error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pdtopo local webhook CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	w.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	files := map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"ca.crt":  w.caPEM,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(w.certDir, name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// managerArgs serve the webhooks on loopback with the local certificate.
func (w *localWebhooks) managerArgs(agentImage string) []string {
	return []string{
		"--webhook-certs=files",
		"--webhook-host=127.0.0.1",
		"--webhook-port=" + strconv.Itoa(w.port),
		"--webhook-cert-dir=" + w.certDir,
		"--agent-image=" + agentImage,
	}
}

// install creates every webhook configuration of dir's manifests, each
// webhook's Service reference replaced by the manager's loopback URL.
func (w *localWebhooks) install(ctx context.Context, c client.Client, dir string) ([]AppliedObject, error) {
	files, err := filepath.Glob(filepath.Join(dir, "manifests.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no generated webhook manifests in %s (run `make manifests`)", dir)
	}
	objs, err := readObjects(files[0])
	if err != nil {
		return nil, err
	}
	var applied []AppliedObject
	for _, u := range objs {
		if err := w.pointAtManager(u); err != nil {
			return applied, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		if err := c.Create(ctx, u); err != nil {
			return applied, fmt.Errorf("installing %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		applied = append(applied, AppliedObject{File: files[0], Kind: u.GetKind(), Name: u.GetName()})
	}
	return applied, nil
}

// pointAtManager rewrites each webhook's clientConfig from a Service to
// https://127.0.0.1:<port><path> with the local CA.
func (w *localWebhooks) pointAtManager(u *unstructured.Unstructured) error {
	hooks, _, err := unstructured.NestedSlice(u.Object, "webhooks")
	if err != nil {
		return err
	}
	for i, h := range hooks {
		hook, ok := h.(map[string]any)
		if !ok {
			return errors.New("a webhook is not an object")
		}
		path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
		hook["clientConfig"] = map[string]any{
			"url":      fmt.Sprintf("https://127.0.0.1:%d%s", w.port, path),
			"caBundle": base64.StdEncoding.EncodeToString(w.caPEM), // JSON carries bytes as base64
		}
		hooks[i] = hook
	}
	return unstructured.SetNestedSlice(u.Object, hooks, "webhooks")
}

func (w *localWebhooks) remove() error { return os.RemoveAll(w.certDir) }

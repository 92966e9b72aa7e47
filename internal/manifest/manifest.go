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

// Package manifest reads PDPair objects from YAML or JSON files, strictly:
// unknown fields, wrong kinds and wrong types are errors that name the field.
package manifest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

// maxManifestBytes bounds what is read, so a wrong path (a device, a huge
// file) fails cleanly instead of eating memory.
const maxManifestBytes = 8 << 20

// ReadPDPairs decodes every PDPair document in r (YAML documents separated by
// "---", or JSON). Empty documents are skipped; any other kind is an error.
func ReadPDPairs(r io.Reader) ([]pdv1.PDPair, error) {
	pairs, _, err := readDocuments(r, false)
	return pairs, err
}

// ReadPDPairsAmong decodes the PDPair documents of r, which may hold other
// objects too (an application's manifests): documents of another kind, or
// of none, are left out and returned as skipped. A document of kind PDPair
// is decoded as strictly as ReadPDPairs does, and one that is not a YAML or
// JSON object is still an error. With no PDPair at all the error is
// ErrNoPDPair, and the skipped documents are still returned.
func ReadPDPairsAmong(r io.Reader) ([]pdv1.PDPair, []Skipped, error) {
	return readDocuments(r, true)
}

// Skipped is a document ReadPDPairsAmong left out.
type Skipped struct {
	// Document is its position in the stream, from 1.
	Document int
	// Kind and Name are its kind and metadata.name, when it has them.
	Kind, Name string
}

func (s Skipped) String() string {
	switch {
	case s.Kind == "":
		return fmt.Sprintf("document %d (no kind)", s.Document)
	case s.Name == "":
		return s.Kind
	}
	return s.Kind + " " + s.Name
}

func readDocuments(r io.Reader, among bool) ([]pdv1.PDPair, []Skipped, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading manifest: %w", err)
	}
	if len(data) > maxManifestBytes {
		return nil, nil, fmt.Errorf("manifest is larger than %d bytes", maxManifestBytes)
	}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var pairs []pdv1.PDPair
	var skipped []Skipped
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		head, err := readHead(doc)
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", n, err)
		}
		if among && head.Kind != "PDPair" {
			skipped = append(skipped, Skipped{Document: n, Kind: head.Kind, Name: head.Name})
			continue
		}
		pair, err := decodePDPair(doc, head)
		if err != nil {
			return nil, nil, fmt.Errorf("document %d: %w", n, err)
		}
		pairs = append(pairs, pair)
	}
	if len(pairs) == 0 {
		return nil, skipped, ErrNoPDPair
	}
	return pairs, skipped, nil
}

// ErrNoPDPair is the readers' error for input that holds no PDPair: only
// comments or whitespace (or, for ReadPDPairsAmong, only other objects), so
// that callers reading a directory can skip such files.
var ErrNoPDPair = errors.New("manifest holds no PDPair")

// ReadPDPair decodes the one PDPair in r; when r holds several, name picks one.
func ReadPDPair(r io.Reader, name string) (*pdv1.PDPair, error) {
	pairs, err := ReadPDPairs(r)
	if err != nil {
		return nil, err
	}
	return Pick(pairs, name)
}

// ReadPDPairFile is ReadPDPair of the file at path; errors name the file.
func ReadPDPairFile(path, name string) (*pdv1.PDPair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pair, err := ReadPDPair(f, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return pair, nil
}

// Pick returns the one pair of pairs, or the one named name when there are
// several; the error lists the names to choose from.
func Pick(pairs []pdv1.PDPair, name string) (*pdv1.PDPair, error) {
	var names []string
	for i := range pairs {
		if name == "" && len(pairs) == 1 || pairs[i].Name == name && name != "" {
			return &pairs[i], nil
		}
		names = append(names, pairs[i].Name)
	}
	if name == "" {
		return nil, fmt.Errorf("manifest holds %d PDPairs (%s); choose one with --name", len(pairs), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("manifest holds no PDPair named %q (it has %s)", name, strings.Join(names, ", "))
}

// head is what a Kubernetes object document says about itself.
type head struct {
	APIVersion, Kind, Name string
}

// readHead reads a document's apiVersion, kind and metadata.name, those
// that are strings; it fails only on a document that is not an object.
func readHead(doc []byte) (head, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return head{}, fmt.Errorf("not a YAML or JSON object: %w", err)
	}
	h := head{}
	h.APIVersion, _ = obj["apiVersion"].(string)
	h.Kind, _ = obj["kind"].(string)
	if meta, ok := obj["metadata"].(map[string]any); ok {
		h.Name, _ = meta["name"].(string)
	}
	return h, nil
}

func decodePDPair(doc []byte, meta head) (pdv1.PDPair, error) {
	if meta.Kind != "PDPair" {
		return pdv1.PDPair{}, fmt.Errorf("kind is %q, want PDPair", meta.Kind)
	}
	if meta.APIVersion != pdv1.GroupVersion.String() {
		return pdv1.PDPair{}, fmt.Errorf("apiVersion is %q, want %s", meta.APIVersion, pdv1.GroupVersion)
	}
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return pdv1.PDPair{}, fmt.Errorf("PDPair: %w", err)
	}
	var pair pdv1.PDPair
	strict, err := sigsjson.UnmarshalStrict(data, &pair)
	if err != nil {
		return pdv1.PDPair{}, fmt.Errorf("PDPair: %w", err)
	}
	if len(strict) > 0 {
		return pdv1.PDPair{}, fmt.Errorf("PDPair: %w", errors.Join(strict...))
	}
	return pair, nil
}

// stripComments drops comment-only lines so a document of comments counts as empty.
func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

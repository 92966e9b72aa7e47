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
// "---", or JSON). Empty documents are skipped.
func ReadPDPairs(r io.Reader) ([]pdv1.PDPair, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if len(data) > maxManifestBytes {
		return nil, fmt.Errorf("manifest is larger than %d bytes", maxManifestBytes)
	}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var pairs []pdv1.PDPair
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		pair, err := decodePDPair(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		pairs = append(pairs, pair)
	}
	if len(pairs) == 0 {
		return nil, ErrNoPDPair
	}
	return pairs, nil
}

// ErrNoPDPair is ReadPDPairs' error for input that holds no document at all
// (only comments or whitespace), so that callers reading a directory can skip
// such files.
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

func decodePDPair(doc []byte) (pdv1.PDPair, error) {
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return pdv1.PDPair{}, fmt.Errorf("not a YAML or JSON object: %w", err)
	}
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

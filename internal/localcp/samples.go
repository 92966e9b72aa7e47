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
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the server-side-apply field manager of the samples that
// `make run` applies.
const FieldManager = "pdtopo-run"

// AppliedObject names one object applied from a sample file.
type AppliedObject struct {
	File      string
	Kind      string
	Namespace string
	Name      string
}

func (a AppliedObject) String() string {
	return fmt.Sprintf("%s %s/%s (%s)", a.Kind, a.Namespace, a.Name, filepath.Base(a.File))
}

// ApplySamples server-side-applies every object of every *.yaml file in dir
// (kustomization.yaml excepted), in file-name order, into namespace "default"
// unless an object names its own. It applies what it can and returns one
// error per object the API server refused, each naming the file and object.
func ApplySamples(ctx context.Context, c client.Client, dir string) ([]AppliedObject, error) {
	files, err := sampleFiles(dir)
	if err != nil {
		return nil, err
	}
	var applied []AppliedObject
	var errs []error
	for _, file := range files {
		a, err := applyFile(ctx, c, file)
		applied = append(applied, a...)
		errs = append(errs, err)
	}
	return applied, errors.Join(errs...)
}

// applyFile server-side-applies every object of file as ApplySamples does.
func applyFile(ctx context.Context, c client.Client, file string) ([]AppliedObject, error) {
	objs, err := readObjects(file)
	if err != nil {
		return nil, err
	}
	var applied []AppliedObject
	var errs []error
	for _, u := range objs {
		if u.GetNamespace() == "" {
			u.SetNamespace("default")
		}
		obj := AppliedObject{File: file, Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
		err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(FieldManager), client.ForceOwnership)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: applying %s %s: %w", file, obj.Kind, obj.Name, err))
			continue
		}
		applied = append(applied, obj)
	}
	return applied, errors.Join(errs...)
}

func sampleFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading samples: %w", err)
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "kustomization.yaml" || (filepath.Ext(name) != ".yaml" && filepath.Ext(name) != ".yml") {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no sample *.yaml files", dir)
	}
	return files, nil
}

// readObjects decodes every non-empty YAML document of a file.
func readObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	docs := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objs []*unstructured.Unstructured
	for n := 1; ; n++ {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, n, err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", file, n, err)
		}
		if len(u.Object) == 0 {
			continue // only comments or blank
		}
		if u.GetAPIVersion() == "" || u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("%s: document %d needs apiVersion, kind and metadata.name", file, n)
		}
		objs = append(objs, u)
	}
}

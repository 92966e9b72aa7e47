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

package planstore

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// source reads one key of one published object, at most limit bytes.
// A key that is not there is reported as errAbsent.
type source interface {
	read(configMap, key string, limit int64) ([]byte, error)
}

var errAbsent = errors.New("absent")

// errTooLong is returned when a value is longer than the limit the caller set.
var errTooLong = errors.New("too long")

// objectSource reads from objects fetched through the API.
type objectSource map[string]Object

func newObjectSource(objects []Object) objectSource {
	s := make(objectSource, len(objects))
	for _, o := range objects {
		s[o.Name] = o
	}
	return s
}

// read looks in every object when configMap is "" (the caller does not know
// the index's name when it looks for "index.json"); a key found in more than
// one object is ambiguous, as in a projected directory it could not be.
func (s objectSource) read(configMap, key string, limit int64) ([]byte, error) {
	var found []byte
	hits := 0
	for name, o := range s {
		if configMap != "" && name != configMap {
			continue
		}
		if v, ok := o.BinaryData[key]; ok {
			found, hits = v, hits+1
		} else if v, ok := o.Data[key]; ok {
			found, hits = []byte(v), hits+1
		}
	}
	switch hits {
	case 0:
		return nil, errAbsent
	case 1:
		return capped(found, limit)
	default:
		return nil, fmt.Errorf("key %s is in %d objects; pass the objects of one PDPair", key, hits)
	}
}

func capped(b []byte, limit int64) ([]byte, error) {
	if int64(len(b)) > limit {
		return nil, errTooLong
	}
	return b, nil
}

// dirSource reads a directory where every object is projected together; keys
// are file names and the object a key came from is not visible.
type dirSource struct{ base string }

// newDirSource pins one snapshot of an atomic-writer directory: the files
// there are symlinks into "..data", which the kubelet swaps on update, so
// every read goes through "..data" resolved once.
func newDirSource(dir string) (dirSource, error) {
	data := filepath.Join(dir, "..data")
	if _, err := os.Lstat(data); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return dirSource{base: dir}, nil // a plain directory (tests, hand-made copies)
		}
		return dirSource{}, err
	}
	resolved, err := filepath.EvalSymlinks(data)
	if err != nil {
		return dirSource{}, err
	}
	return dirSource{base: resolved}, nil
}

func (s dirSource) read(_ string, key string, limit int64) ([]byte, error) {
	f, err := os.Open(filepath.Join(s.base, key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errAbsent
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	return capped(b, limit)
}

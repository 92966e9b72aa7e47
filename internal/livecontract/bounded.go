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

package livecontract

import (
	"bytes"
	"errors"
	"io"
)

// errTooLong: the body did not end within the limit.
var errTooLong = errors.New("the answer is longer than the limit")

// readBounded reads a body of at most limit bytes: into a buffer sized once
// from a declared length (already checked against the limit), or grown
// while reading and never past limit+1 bytes read, so that a 2 GiB stream
// is refused after limit+1 bytes and the buffer is dropped at once.
func readBounded(body io.Reader, declared, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if declared >= 0 && declared <= limit {
		buf.Grow(int(declared) + bytes.MinRead)
	}
	n, err := buf.ReadFrom(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, errTooLong
	}
	return buf.Bytes(), nil
}

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

package transferplan

import (
	"fmt"
	"strconv"
	"strings"
)

// maxParallelismText bounds the text ParseParallelism reads: it comes from
// a pod annotation or a command line, and the longest valid form is short.
const maxParallelismText = 64

// String is the layout's text form, "tp=4,dp=1": how a decode pod's
// admitted layout is written in its annotation, its agent's
// --decode-layout flag and the agent's /v1/agent report.
func (p Parallelism) String() string {
	return "tp=" + strconv.Itoa(p.TPSize) + ",dp=" + strconv.Itoa(p.DPSize)
}

// ParseParallelism reads the text form String writes ("tp=4,dp=1"; the
// keys in that order, both present) and validates it as a layout.
func ParseParallelism(s string) (Parallelism, error) {
	if len(s) > maxParallelismText {
		return Parallelism{}, fmt.Errorf("layout %.20q… is %d bytes; the form is tp=N,dp=M", s, len(s))
	}
	tp, dp, ok := strings.Cut(s, ",")
	if !ok {
		return Parallelism{}, fmt.Errorf("layout %q is not of the form tp=N,dp=M", s)
	}
	var p Parallelism
	var err error
	if p.TPSize, err = layoutNumber(s, tp, "tp="); err != nil {
		return Parallelism{}, err
	}
	if p.DPSize, err = layoutNumber(s, dp, "dp="); err != nil {
		return Parallelism{}, err
	}
	if err := p.Validate("layout"); err != nil {
		return Parallelism{}, fmt.Errorf("layout %q: %w", s, err)
	}
	return p, nil
}

func layoutNumber(whole, part, key string) (int, error) {
	digits, ok := strings.CutPrefix(part, key)
	if !ok {
		return 0, fmt.Errorf("layout %q is not of the form tp=N,dp=M (%q should start with %q)", whole, part, key)
	}
	n, err := strconv.Atoi(digits)
	if err != nil || digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, fmt.Errorf("layout %q: %s%q is not a positive number", whole, key, digits)
	}
	return n, nil
}

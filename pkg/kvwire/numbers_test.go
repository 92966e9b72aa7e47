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

package kvwire

import (
	"math"
	"testing"
)

func TestParseDecimal(t *testing.T) {
	cases := []struct {
		in       string
		want     int64
		ok, over bool
	}{
		{"0", 0, true, false},
		{"42", 42, true, false},
		{"-1", -1, true, false},
		{"+7", 7, true, false},
		{"007", 7, true, false},
		{"9223372036854775807", math.MaxInt64, true, false},
		{"-9223372036854775808", math.MinInt64, true, false},
		{"9223372036854775808", 0, false, true},
		{"-9223372036854775809", 0, false, true},
		{"123456789012345678901234567890", 0, false, true},
		{"", 0, false, false},
		{"-", 0, false, false},
		{"+", 0, false, false},
		{" 5", 0, false, false},
		{"5 ", 0, false, false},
		{"1_000", 0, false, false},
		{"--1", 0, false, false},
		{"0x10", 0, false, false},
		{"None", 0, false, false},
		{"99999999999999999999x", 0, false, false},
		{"\u0663", 0, false, false}, // Arabic-Indic three: int() takes it, ASCII decoding does not
	}
	for _, c := range cases {
		v, ok, over := ParseDecimal([]byte(c.in))
		if v != c.want || ok != c.ok || over != c.over {
			t.Errorf("parseDecimal(%q) = %d, %v, %v; want %d, %v, %v", c.in, v, ok, over, c.want, c.ok, c.over)
		}
	}
}

func TestArraysAreLittleEndian(t *testing.T) {
	// numpy's tobytes() on the little-endian hosts the reference runs on.
	if got, want := le64(0x0102030405060708), "\x08\x07\x06\x05\x04\x03\x02\x01"; got != want {
		t.Errorf("u64: %q, want %q", got, want)
	}
	if got, want := lei64(-2), "\xfe\xff\xff\xff\xff\xff\xff\xff"; got != want {
		t.Errorf("i64: %q, want %q", got, want)
	}
	if got, want := lei32(-1, 258), "\xff\xff\xff\xff\x02\x01\x00\x00"; got != want {
		t.Errorf("i32: %q, want %q", got, want)
	}
	if got, want := string(AppendBools(nil, []bool{true, false, true})), "\x01\x00\x01"; got != want {
		t.Errorf("bools: %q, want %q", got, want)
	}
}

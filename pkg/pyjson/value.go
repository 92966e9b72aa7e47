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

package pyjson

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// The engine decodes a cache contract with Python's json.loads and then
// builds dataclasses from the result, checking only some values and some
// types. What it accepts therefore depends on Python's value semantics:
// 1 == 1.0 == True, NaN <= 0 is false, tuple("ab") is ("a", "b"), a dict
// iterates over its keys, and so on. Value is a decoded JSON value with
// exactly the distinctions Python makes, so that the decoder can refuse
// what the engine refuses and no more.

// Kind is a value's Python type.
type Kind uint8

// The kinds json.loads produces: None, bool, int, float, str, list, dict.
const (
	None Kind = iota
	Bool
	Int
	Float
	Str
	List
	Dict
)

// Value is one JSON value as Python holds it. Strings are kept as WTF-8
// (UTF-8 that may also encode lone surrogates, which Python's decoder lets
// through), so that comparing and ordering them matches Python's code point
// order.
type Value struct {
	kind  Kind
	b     bool
	i     *big.Int
	f     float64
	s     string
	items []Value  // list elements, or dict values
	keys  []string // dict keys (WTF-8), parallel to items
}

// Integer is the Python int n.
func Integer(n int64) Value { return Value{kind: Int, i: big.NewInt(n)} }

// String is the Python str s (WTF-8).
func String(s string) Value { return Value{kind: Str, s: s} }

// NewList is the Python list of items. The zero Value is None.
func NewList(items []Value) Value { return Value{kind: List, items: items} }

// Kind is the value's Python type.
func (v Value) Kind() Kind { return v.kind }

// Text is a string's WTF-8 text ("" for other kinds).
func (v Value) Text() string { return v.s }

// BigInt is an int's value (nil for other kinds); callers must not change it.
func (v Value) BigInt() *big.Int { return v.i }

// Keys are a dict's keys in document order (WTF-8), the last of duplicates
// kept at the first one's position.
func (v Value) Keys() []string { return v.keys }

// Get returns a dict's value for key.
func (v Value) Get(key string) (Value, bool) {
	for i, k := range v.keys {
		if k == key {
			return v.items[i], true
		}
	}
	return Value{}, false
}

// Truthy is Python's bool(v).
func (v Value) Truthy() bool {
	switch v.kind {
	case Bool:
		return v.b
	case Int:
		return v.i.Sign() != 0
	case Float:
		return v.f != 0
	case Str:
		return v.s != ""
	case List, Dict:
		return len(v.items) > 0
	}
	return false
}

// isInt is isinstance(v, int) and not isinstance(v, bool).
func (v Value) numeric() bool { return v.kind == Bool || v.kind == Int || v.kind == Float }

// asBig is the integer value of a bool or an int.
func (v Value) asBig() *big.Int {
	if v.kind == Bool {
		if v.b {
			return big.NewInt(1)
		}
		return big.NewInt(0)
	}
	return v.i
}

// Int64 returns an int's value when it fits.
func (v Value) Int64() (int64, bool) {
	if v.kind != Int || !v.i.IsInt64() {
		return 0, false
	}
	return v.i.Int64(), true
}

// errPyType, errPyZeroDivision and errPyOverflow stand for the Python
// exceptions an operation would raise; any of them means "refused".
var (
	errPyType         = errors.New("TypeError")
	errPyZeroDivision = errors.New("ZeroDivisionError")
	errPyOverflow     = errors.New("OverflowError")
)

// Compare orders two numbers exactly, as Python does (an int is never
// rounded to compare it with a float). unordered is set when either is NaN.
func Compare(a, b Value) (cmp int, unordered bool, err error) {
	if !a.numeric() || !b.numeric() {
		return 0, false, errPyType
	}
	if a.kind == Float && math.IsNaN(a.f) || b.kind == Float && math.IsNaN(b.f) {
		return 0, true, nil
	}
	return exactFloat(a).Cmp(exactFloat(b)), false, nil
}

func exactFloat(v Value) *big.Float {
	if v.kind == Float {
		return new(big.Float).SetFloat64(v.f) // exact; ±Inf allowed
	}
	return new(big.Float).SetInt(v.asBig()) // precision grows to hold it exactly
}

// Less is a < b.
func Less(a, b Value) (bool, error) {
	c, unordered, err := Compare(a, b)
	return err == nil && !unordered && c < 0, err
}

// LessEqualZero is v <= 0.
func LessEqualZero(v Value) (bool, error) {
	c, unordered, err := Compare(v, Integer(0))
	return err == nil && !unordered && c <= 0, err
}

// toFloat converts a number as Python's float(int) does: correctly
// rounded, OverflowError past the largest float.
func toFloat(v Value) (float64, error) {
	if v.kind == Float {
		return v.f, nil
	}
	f, _ := new(big.Float).SetInt(v.asBig()).Float64()
	if math.IsInf(f, 0) {
		return 0, errPyOverflow
	}
	return f, nil
}

// DivMod is Python's divmod(a, b) for numbers: floor division and a
// remainder with the sign of the divisor.
func DivMod(a, b Value) (div, mod Value, err error) {
	if !a.numeric() || !b.numeric() {
		return Value{}, Value{}, errPyType
	}
	if a.kind != Float && b.kind != Float {
		x, y := a.asBig(), b.asBig()
		if y.Sign() == 0 {
			return Value{}, Value{}, errPyZeroDivision
		}
		q, r := new(big.Int).QuoRem(x, y, new(big.Int))
		if r.Sign() != 0 && (r.Sign() < 0) != (y.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
			r.Add(r, y)
		}
		return Value{kind: Int, i: q}, Value{kind: Int, i: r}, nil
	}
	x, err := toFloat(a)
	if err != nil {
		return Value{}, Value{}, err
	}
	y, err := toFloat(b)
	if err != nil {
		return Value{}, Value{}, err
	}
	if y == 0 {
		return Value{}, Value{}, errPyZeroDivision
	}
	d, m := floatDivMod(x, y)
	return Value{kind: Float, f: d}, Value{kind: Float, f: m}, nil
}

// floatDivMod follows CPython's _float_div_mod step by step.
func floatDivMod(vx, wx float64) (floordiv, mod float64) {
	mod = math.Mod(vx, wx)
	div := (vx - mod) / wx
	if mod != 0 {
		if (wx < 0) != (mod < 0) {
			mod += wx
			div -= 1.0
		}
	} else {
		mod = math.Copysign(0, wx)
	}
	if div != 0 {
		floordiv = math.Floor(div)
		if div-floordiv > 0.5 {
			floordiv += 1.0
		}
	} else {
		floordiv = math.Copysign(0, vx/wx)
	}
	return floordiv, mod
}

// Equal is Python's ==.
func Equal(a, b Value) bool {
	if a.numeric() && b.numeric() {
		c, unordered, _ := Compare(a, b)
		return !unordered && c == 0
	}
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case None:
		return true
	case Str:
		return a.s == b.s
	case List:
		if len(a.items) != len(b.items) {
			return false
		}
		for i := range a.items {
			if !Equal(a.items[i], b.items[i]) {
				return false
			}
		}
		return true
	case Dict:
		if len(a.items) != len(b.items) {
			return false
		}
		for i, k := range a.keys {
			w, ok := b.Get(k)
			if !ok || !Equal(a.items[i], w) {
				return false
			}
		}
		return true
	}
	return false
}

// EqualAll compares two sequences element by element.
func EqualAll(a, b []Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// HashKey is a key under which values Python's sets and dicts treat as
// the same element collide (1, 1.0 and True do); ok is false for the
// unhashable list and dict. Each NaN is its own element, as two NaN
// objects decoded from JSON are.
func HashKey(v Value, nanSerial *int) (key string, ok bool) {
	switch v.kind {
	case None:
		return "n", true
	case Bool, Int:
		return "i" + v.asBig().String(), true
	case Float:
		switch {
		case math.IsNaN(v.f):
			*nanSerial++
			return "nan" + strconv.Itoa(*nanSerial), true
		case !math.IsInf(v.f, 0) && v.f == math.Trunc(v.f):
			i, _ := new(big.Float).SetFloat64(v.f).Int(nil)
			return "i" + i.String(), true
		}
		return "f" + strconv.FormatFloat(v.f, 'g', -1, 64), true
	case Str:
		return "s" + v.s, true
	}
	return "", false
}

// Iterate is Python's `for x in v` for the values JSON holds: a list's
// elements, a dict's keys, a string's characters; anything else is not
// iterable.
func Iterate(v Value) ([]Value, error) {
	switch v.kind {
	case List:
		return v.items, nil
	case Dict:
		out := make([]Value, len(v.keys))
		for i, k := range v.keys {
			out[i] = String(k)
		}
		return out, nil
	case Str:
		var out []Value
		for _, r := range wtf8Runes(v.s) {
			out = append(out, String(string(wtf8Encode(nil, r))))
		}
		return out, nil
	}
	return nil, errPyType
}

// SortStable sorts xs by key as Python's sorted(xs, key=key) does when
// every key is a string (code point order, which WTF-8 byte order is).
// Other keys are not ordered here: ok is false when two or more elements
// have a key that is not a string.
func SortStable[T any](xs []T, key func(T) Value) (ok bool) {
	if len(xs) < 2 {
		return true
	}
	for _, x := range xs {
		if key(x).kind != Str {
			return false
		}
	}
	slices.SortStableFunc(xs, func(a, b T) int { return strings.Compare(key(a).s, key(b).s) })
	return true
}

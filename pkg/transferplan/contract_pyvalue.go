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
// iterates over its keys, and so on. pyValue is a decoded JSON value with
// exactly the distinctions Python makes, so that the decoder can refuse
// what the engine refuses and no more.

type pyKind uint8

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyFloat
	pyStr
	pyList
	pyDict
)

// pyValue is one JSON value as Python holds it. Strings are kept as WTF-8
// (UTF-8 that may also encode lone surrogates, which Python's decoder lets
// through), so that comparing and ordering them matches Python's code point
// order.
type pyValue struct {
	kind  pyKind
	b     bool
	i     *big.Int
	f     float64
	s     string
	items []pyValue // list elements, or dict values
	keys  []string  // dict keys (WTF-8), parallel to items
}

func pyInteger(n int64) pyValue { return pyValue{kind: pyInt, i: big.NewInt(n)} }
func pyString(s string) pyValue { return pyValue{kind: pyStr, s: s} }

// get returns a dict's value for key.
func (v pyValue) get(key string) (pyValue, bool) {
	for i, k := range v.keys {
		if k == key {
			return v.items[i], true
		}
	}
	return pyValue{}, false
}

// truthy is Python's bool(v).
func (v pyValue) truthy() bool {
	switch v.kind {
	case pyBool:
		return v.b
	case pyInt:
		return v.i.Sign() != 0
	case pyFloat:
		return v.f != 0
	case pyStr:
		return v.s != ""
	case pyList, pyDict:
		return len(v.items) > 0
	}
	return false
}

// isInt is isinstance(v, int) and not isinstance(v, bool).
func (v pyValue) numeric() bool { return v.kind == pyBool || v.kind == pyInt || v.kind == pyFloat }

// asBig is the integer value of a bool or an int.
func (v pyValue) asBig() *big.Int {
	if v.kind == pyBool {
		if v.b {
			return big.NewInt(1)
		}
		return big.NewInt(0)
	}
	return v.i
}

// int64 returns an int's value when it fits.
func (v pyValue) int64() (int64, bool) {
	if v.kind != pyInt || !v.i.IsInt64() {
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

// pyCompare orders two numbers exactly, as Python does (an int is never
// rounded to compare it with a float). unordered is set when either is NaN.
func pyCompare(a, b pyValue) (cmp int, unordered bool, err error) {
	if !a.numeric() || !b.numeric() {
		return 0, false, errPyType
	}
	if a.kind == pyFloat && math.IsNaN(a.f) || b.kind == pyFloat && math.IsNaN(b.f) {
		return 0, true, nil
	}
	return exactFloat(a).Cmp(exactFloat(b)), false, nil
}

func exactFloat(v pyValue) *big.Float {
	if v.kind == pyFloat {
		return new(big.Float).SetFloat64(v.f) // exact; ±Inf allowed
	}
	return new(big.Float).SetInt(v.asBig()) // precision grows to hold it exactly
}

// pyLess is a < b; pyLessEqualZero is v <= 0.
func pyLess(a, b pyValue) (bool, error) {
	c, unordered, err := pyCompare(a, b)
	return err == nil && !unordered && c < 0, err
}

func pyLessEqualZero(v pyValue) (bool, error) {
	c, unordered, err := pyCompare(v, pyInteger(0))
	return err == nil && !unordered && c <= 0, err
}

// toFloat converts a number as Python's float(int) does: correctly
// rounded, OverflowError past the largest float.
func toFloat(v pyValue) (float64, error) {
	if v.kind == pyFloat {
		return v.f, nil
	}
	f, _ := new(big.Float).SetInt(v.asBig()).Float64()
	if math.IsInf(f, 0) {
		return 0, errPyOverflow
	}
	return f, nil
}

// pyDivMod is Python's divmod(a, b) for numbers: floor division and a
// remainder with the sign of the divisor.
func pyDivMod(a, b pyValue) (div, mod pyValue, err error) {
	if !a.numeric() || !b.numeric() {
		return pyValue{}, pyValue{}, errPyType
	}
	if a.kind != pyFloat && b.kind != pyFloat {
		x, y := a.asBig(), b.asBig()
		if y.Sign() == 0 {
			return pyValue{}, pyValue{}, errPyZeroDivision
		}
		q, r := new(big.Int).QuoRem(x, y, new(big.Int))
		if r.Sign() != 0 && (r.Sign() < 0) != (y.Sign() < 0) {
			q.Sub(q, big.NewInt(1))
			r.Add(r, y)
		}
		return pyValue{kind: pyInt, i: q}, pyValue{kind: pyInt, i: r}, nil
	}
	x, err := toFloat(a)
	if err != nil {
		return pyValue{}, pyValue{}, err
	}
	y, err := toFloat(b)
	if err != nil {
		return pyValue{}, pyValue{}, err
	}
	if y == 0 {
		return pyValue{}, pyValue{}, errPyZeroDivision
	}
	d, m := floatDivMod(x, y)
	return pyValue{kind: pyFloat, f: d}, pyValue{kind: pyFloat, f: m}, nil
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

// pyEqual is Python's ==.
func pyEqual(a, b pyValue) bool {
	if a.numeric() && b.numeric() {
		c, unordered, _ := pyCompare(a, b)
		return !unordered && c == 0
	}
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case pyNone:
		return true
	case pyStr:
		return a.s == b.s
	case pyList:
		if len(a.items) != len(b.items) {
			return false
		}
		for i := range a.items {
			if !pyEqual(a.items[i], b.items[i]) {
				return false
			}
		}
		return true
	case pyDict:
		if len(a.items) != len(b.items) {
			return false
		}
		for i, k := range a.keys {
			w, ok := b.get(k)
			if !ok || !pyEqual(a.items[i], w) {
				return false
			}
		}
		return true
	}
	return false
}

// pyEqualAll compares two sequences element by element.
func pyEqualAll(a, b []pyValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !pyEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// pyHashKey is a key under which values Python's sets and dicts treat as
// the same element collide (1, 1.0 and True do); ok is false for the
// unhashable list and dict. Each NaN is its own element, as two NaN
// objects decoded from JSON are.
func pyHashKey(v pyValue, nanSerial *int) (key string, ok bool) {
	switch v.kind {
	case pyNone:
		return "n", true
	case pyBool, pyInt:
		return "i" + v.asBig().String(), true
	case pyFloat:
		switch {
		case math.IsNaN(v.f):
			*nanSerial++
			return "nan" + strconv.Itoa(*nanSerial), true
		case !math.IsInf(v.f, 0) && v.f == math.Trunc(v.f):
			i, _ := new(big.Float).SetFloat64(v.f).Int(nil)
			return "i" + i.String(), true
		}
		return "f" + strconv.FormatFloat(v.f, 'g', -1, 64), true
	case pyStr:
		return "s" + v.s, true
	}
	return "", false
}

// pyIterate is Python's `for x in v` for the values JSON holds: a list's
// elements, a dict's keys, a string's characters; anything else is not
// iterable.
func pyIterate(v pyValue) ([]pyValue, error) {
	switch v.kind {
	case pyList:
		return v.items, nil
	case pyDict:
		out := make([]pyValue, len(v.keys))
		for i, k := range v.keys {
			out[i] = pyString(k)
		}
		return out, nil
	case pyStr:
		var out []pyValue
		for _, r := range wtf8Runes(v.s) {
			out = append(out, pyString(string(wtf8Encode(nil, r))))
		}
		return out, nil
	}
	return nil, errPyType
}

// pySortStable sorts xs by key as Python's sorted(xs, key=key) does when
// every key is a string (code point order, which WTF-8 byte order is).
// Other keys are not ordered here: ok is false when two or more elements
// have a key that is not a string.
func pySortStable[T any](xs []T, key func(T) pyValue) (ok bool) {
	if len(xs) < 2 {
		return true
	}
	for _, x := range xs {
		if key(x).kind != pyStr {
			return false
		}
	}
	slices.SortStableFunc(xs, func(a, b T) int { return strings.Compare(key(a).s, key(b).s) })
	return true
}

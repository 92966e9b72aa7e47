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

package rules

import "fmt"

// describe writes a pair's layout the way tests and messages name it:
// "TP 8 → TP 4, block 16 → 32, HND → HND, auto → auto".
func describe(p Pair) string {
	return fmt.Sprintf("TP %d → TP %d, block %d → %d, %s → %s, %s → %s",
		p.Prefill.TP, p.Decode.TP, p.Prefill.BlockSize, p.Decode.BlockSize,
		p.Prefill.layout(), p.Decode.layout(), p.Prefill.dtype(), p.Decode.dtype())
}

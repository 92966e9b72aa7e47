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

// Package chaos is the chaos suite: a real receiver agent process (the
// built binary) beside a prefill peer process, four decode engine ranks
// driving rooms through the Python adapter (driver.py), and a seeded
// schedule of faults against them: the agent SIGKILLed and restarted, the
// prefill stopped past the timeouts (its bootstrap server hangs), killed
// and restarted at once with its ranks on new ports, kept down (its
// bootstrap server refuses), and engine processes killed and started again
// (they register anew). The invariants the test holds the run to are in
// invariants.go; docs/testing.md says how to run it and docs/benchmarks.md
// records its figures.
package chaos

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

package plansource

import (
	"fmt"
	"sync"

	"github.com/pdtopo/pdtopo/pkg/planstore"
)

// Signed is what a Dir trusts when the operator signs its plans: an index
// whose "index.sig" verifies with one of Keys, signed for the pair
// Namespace/PDPair, of the same pair instance (UID) and of a generation no
// older than the newest this agent has loaded. A tenant who can write the
// pair's ConfigMaps can put anything there, including an index and
// signature the operator published for an older generation: the first is
// refused as unsigned, the second as stale, and the plans in use are kept.
type Signed struct {
	Keys      planstore.PublicKeys
	Namespace string
	PDPair    string

	mu sync.Mutex
	// uid and generation are those of the newest signed index loaded;
	// generation starts at the floor NewSigned was given.
	uid        string
	generation int64
}

// NewSigned trusts what keys sign for namespace/pdpair, never a generation
// below minGeneration (the pair's generation when the pod was made, or 0).
func NewSigned(keys planstore.PublicKeys, namespace, pdpair string, minGeneration int64) *Signed {
	return &Signed{Keys: keys, Namespace: namespace, PDPair: pdpair, generation: minGeneration}
}

// sealOf verifies a signature in the plan directory, read by read
// (planstore.ReadSignatureDir for the index, ReadSetsSignatureDir for the
// sets index), and returns the seal what it signs must match.
func (s *Signed) sealOf(dir string, read func(dir string, keys planstore.PublicKeys, namespace, pdpair string) (planstore.Statement, error)) (planstore.Statement, error) {
	st, err := read(dir, s.Keys, s.Namespace, s.PDPair)
	if err != nil {
		return st, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uid != "" && st.UID != s.uid {
		return st, refused(planstore.ReasonBadSignature,
			"the index is signed for PDPair %s/%s uid %s, but this agent holds the plans of uid %s: after a pair is recreated under the same name, restart its decode pods",
			s.Namespace, s.PDPair, st.UID, s.uid)
	}
	if st.Generation < s.generation {
		return st, refused(planstore.ReasonStaleGeneration,
			"the index is signed for generation %d of PDPair %s/%s, older than generation %d this agent already holds: an older publication replayed; the plans in use are kept",
			st.Generation, s.Namespace, s.PDPair, s.generation)
	}
	return st, nil
}

// loaded raises the floor to what was just loaded.
func (s *Signed) loaded(st planstore.Statement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uid = st.UID
	s.generation = max(s.generation, st.Generation)
}

func refused(reason planstore.Reason, format string, args ...any) error {
	return &planstore.FormatError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

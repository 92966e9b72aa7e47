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

package v1alpha1_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	pdv1 "github.com/pdtopo/pdtopo/api/v1alpha1"
)

func TestDataParallelDefaultsToOne(t *testing.T) {
	for _, c := range []struct {
		dp   *int32
		want int32
	}{{nil, 1}, {ptr.To[int32](1), 1}, {ptr.To[int32](8), 8}} {
		if got := (pdv1.FleetLayout{TensorParallelSize: 16, DataParallelSize: c.dp}).DataParallel(); got != c.want {
			t.Errorf("DataParallelSize %v: DataParallel() = %d, want %d", c.dp, got, c.want)
		}
	}
}

// ValidEngineVersion takes what the CRD's pattern and maxLength take: the
// bounds are stated once in the CRD's markers and once in Go, and this
// holds the two to each other.
func TestValidEngineVersionIsTheCRDsBound(t *testing.T) {
	crd, err := os.ReadFile("../../config/crd/bases/pd.pdtopo.dev_pdpairs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pattern: " + pdv1.EngineVersionPattern, fmt.Sprintf("maxLength: %d\n                    pattern: %s", pdv1.EngineVersionMaxLength, pdv1.EngineVersionPattern)} {
		if !strings.Contains(string(crd), want) {
			t.Errorf("the CRD does not state %q", want)
		}
	}
	for _, c := range []struct {
		v  string
		ok bool
	}{
		{"0.11.0", true}, {"0.11.1.dev5+g1a2b3c4", true}, {"0.5.3rc0", true}, {"1", true},
		{"", false}, {"v0.11.0", false}, {"0.11 .0", false}, {"0.11.0;rm", false}, {strings.Repeat("1", 65), false}, {strings.Repeat("1", 64), true},
	} {
		if got := pdv1.ValidEngineVersion(c.v); got != c.ok {
			t.Errorf("ValidEngineVersion(%q) = %v, want %v", c.v, got, c.ok)
		}
	}
}

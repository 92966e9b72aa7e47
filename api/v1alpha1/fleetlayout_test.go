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

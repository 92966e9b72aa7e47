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

package localapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// The hand encoding must say exactly what encoding/json says of RoomBody.
func TestAppendRoomMatchesEncodingJSON(t *testing.T) {
	for _, st := range []receiver.RoomStatus{
		{Room: 0, Status: receiver.Bootstrapping, BootstrapToken: -1},
		{Room: 1<<63 - 1, Status: receiver.Success, BootstrapToken: 42, SpecCandidateIDs: []int32{-7, 0, 2147483647}},
		{Room: 5, Status: receiver.Success, BootstrapToken: 1, SpecCandidateIDs: []int32{}},
		{Room: 9, Status: receiver.Failed, BootstrapToken: -1, Failure: &receiver.RoomFailure{Reason: receiver.ReasonLayoutMismatch, Message: "quote \" backslash \\ nul \x00 <tag> é \u2028"}},
	} {
		var got, want RoomBody
		if err := json.Unmarshal(appendRoom(nil, st), &got); err != nil {
			t.Fatalf("%+v: %v: %s", st, err, appendRoom(nil, st))
		}
		raw, _ := json.Marshal(roomBody(st))
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("hand encoding %+v\nencoding/json %+v", got, want)
		}
	}
}

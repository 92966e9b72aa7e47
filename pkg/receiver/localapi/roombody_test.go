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
		json.Unmarshal(raw, &want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("hand encoding %+v\nencoding/json %+v", got, want)
		}
	}
}

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
	"net/http"
	"strconv"
	"sync"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// roomBuffers recycle the encoding of room answers, the API's hottest
// answer (every open, request and poll).
var roomBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// writeRoom writes RoomBody's JSON for st, encoded by hand: it is the
// same shape every time, and reflection would cost more than the rest of
// the call. Strings that may need escaping go through encoding/json.
func writeRoom(w http.ResponseWriter, code int, st receiver.RoomStatus) {
	bp := roomBuffers.Get().(*[]byte)
	b := appendRoom((*bp)[:0], st)
	writeRaw(w, code, b)
	*bp = b
	roomBuffers.Put(bp)
}

func appendRoom(b []byte, st receiver.RoomStatus) []byte {
	return appendRoomFields(append(b, '{'), st)
}

// appendRoomFields appends RoomBody's fields and closes the object.
func appendRoomFields(b []byte, st receiver.RoomStatus) []byte {
	b = append(b, `"room":`...)
	b = strconv.AppendInt(b, st.Room, 10)
	b = append(b, `,"status":"`...)
	b = append(b, st.Status.String()...) // a fixed name: no escaping needed
	b = append(b, `","bootstrapToken":`...)
	b = strconv.AppendInt(b, st.BootstrapToken, 10)
	b = append(b, `,"specCandidateIds":`...)
	if st.SpecCandidateIDs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, id := range st.SpecCandidateIDs {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(id), 10)
		}
		b = append(b, ']')
	}
	if st.Failure == nil {
		b = append(b, `,"failureCode":null,"failureMessage":null`...)
	} else {
		b = append(b, `,"failureCode":"`...)
		b = append(b, st.Failure.Reason...) // an identifier: no escaping needed
		b = append(b, `","failureMessage":`...)
		msg, _ := json.Marshal(st.Failure.Message)
		b = append(b, msg...)
	}
	return append(b, '}', '\n')
}

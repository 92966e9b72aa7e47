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

package agentclient

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// FuzzAnswers feeds arbitrary bytes to what the client decodes from the
// agent's socket: a room answer and an error answer. Neither may panic;
// an error answer always becomes an *APIError with the status it came with.
func FuzzAnswers(f *testing.F) {
	for _, seed := range []string{
		`{"room":7,"status":"Success","bootstrapToken":5,"specCandidateIds":[1,2],"failureCode":null,"failureMessage":null}`,
		`{"room":7,"status":"Failed","bootstrapToken":-1,"specCandidateIds":null,"failureCode":"LostConnection","failureMessage":"gone"}`,
		`{"room":7,"status":"Sideways"}`,
		`{"error":{"code":"RoomNotFound","message":"room 7 is not open"}}`,
		`{"error":"flat"}`, "", "null", "[1,2]", "\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r Room
		if err := json.Unmarshal(raw, &r); err == nil && !r.Status.Valid() {
			t.Fatalf("%q decoded to status %d", raw, r.Status)
		}
		e := apiError("GET /v1/rooms/7", http.StatusConflict, raw)
		if e.HTTPStatus != http.StatusConflict || !strings.Contains(e.Error(), "409") {
			t.Fatalf("%q: %+v", raw, e)
		}
	})
}

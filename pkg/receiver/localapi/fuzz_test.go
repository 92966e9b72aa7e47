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
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// The local API's bodies come from another process: no input may panic,
// and what is accepted must mean what it says.

func FuzzParseEngine(f *testing.F) {
	f.Add([]byte(`{"sessionId":"127.0.0.1:1","kvDataPtrs":[1,18446744073709551615],"stateDataPtrs":[]}`))
	f.Add([]byte(`{"sessionId":"h:1","kvDataPtrs":null}`))
	f.Add([]byte(`{"kvDataPtrs":[-1]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		info, err := parseEngine(bytes.NewReader(body))
		if err != nil {
			return
		}
		var again EngineBody
		if json.Unmarshal(body, &again) != nil || again.SessionID == nil || *again.SessionID != info.SessionID || !slices.Equal(again.KVDataPtrs, info.KVDataPtrs) {
			t.Fatalf("accepted %q as %+v", body, info)
		}
	})
}

func FuzzParseOpen(f *testing.F) {
	f.Add([]byte(`{"bootstrapAddr":"prefill:8998","room":9223372036854775807}`))
	f.Add([]byte(`{"bootstrapAddr":"","room":0}`))
	f.Add([]byte(`{"room":1.5}`))
	f.Add([]byte(`{"bootstrapAddr":"a:1","room":1}garbage`))
	f.Fuzz(func(t *testing.T, body []byte) {
		addr, room, err := parseOpen(bytes.NewReader(body))
		if err != nil {
			return
		}
		if room < 0 {
			t.Fatalf("accepted negative room %d from %q", room, body)
		}
		var again OpenBody
		if json.Unmarshal(body, &again) != nil || *again.Room != room || *again.BootstrapAddr != addr {
			t.Fatalf("accepted %q as %q %d", body, addr, room)
		}
	})
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"kvIndices":[1,2,3],"auxIndex":4,"decodePrefixLen":0,"mambaIndices":[5]}`))
	f.Add([]byte(`{"kvIndices":[],"auxIndex":0}`))
	f.Add([]byte(`{"kvIndices":[1e3],"auxIndex":0}`))
	f.Add([]byte(`{"kvIndices":[9223372036854775808],"auxIndex":0}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseRequest(bytes.NewReader(body))
		if err != nil {
			if be := (*bodyError)(nil); !errors.As(err, &be) || be.msg == "" {
				t.Fatalf("error %v is not a described body error", err)
			}
			return
		}
		if req.KVIndices == nil {
			t.Fatalf("accepted %q without kvIndices", body)
		}
	})
}

func FuzzPathAndQuery(f *testing.F) {
	for _, s := range []string{"0", "-1", "9223372036854775807", "1e3", "", "2s", "61s", "-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if room, err := parseRoom(s); err == nil && (room < 0 || strings.TrimLeft(s, "+0") == "" && room != 0) {
			t.Fatalf("room %q → %d", s, room)
		}
		if d, err := parseWait(s); err == nil && (d < 0 || d > MaxWait) {
			t.Fatalf("wait %q → %v", s, d)
		}
	})
}

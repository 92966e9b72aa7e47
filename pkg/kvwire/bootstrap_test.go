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

package kvwire

import (
	"testing"
)

func TestDecodeRankAddress(t *testing.T) {
	got, err := DecodeRankAddress([]byte(`{"rank_ip": "10.0.0.3", "rank_port": 41000}`))
	if err != nil || got != (RankAddress{RankIP: "10.0.0.3", RankPort: 41000}) {
		t.Fatalf("%+v %v", got, err)
	}
	bad := []struct {
		name, body string
		reason     Reason
	}{
		{"port missing", `{"rank_ip": "10.0.0.3"}`, ReasonMissingField},
		{"ip null", `{"rank_ip": null, "rank_port": 1}`, ReasonMissingField},
		{"port zero", `{"rank_ip": "h", "rank_port": 0}`, ReasonOutOfRange},
		{"ip with space", `{"rank_ip": "a b", "rank_port": 1}`, ReasonNotASCII},
		{"text body", `Bootstrap info not Found`, ReasonMalformedJSON},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRankAddress([]byte(c.body))
			wantReason(t, err, c.reason, -1)
		})
	}
}

func TestEndpointBracketsIPv6(t *testing.T) {
	for host, want := range map[string]string{"10.0.0.3": "tcp://10.0.0.3:41000", "::1": "tcp://[::1]:41000"} {
		if got := Endpoint(host, 41000); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", host, got, want)
		}
	}
}

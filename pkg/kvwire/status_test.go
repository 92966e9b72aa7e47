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
	"encoding/json"
	"reflect"
	"testing"
)

func TestTransferPollNumbersAndNames(t *testing.T) {
	// The numbers are the wire format; they must never move.
	want := map[TransferPoll]string{0: "Failed", 1: "Bootstrapping", 2: "Bootstrapped", 3: "WaitingForInput", 4: "Transferring", 5: "Success"}
	if Failed != 0 || Success != 5 {
		t.Fatal("TransferPoll constants moved")
	}
	for p, name := range want {
		if p.String() != name {
			t.Errorf("%d.String() = %q, want %q", int(p), p.String(), name)
		}
		back, err := ParseTransferPoll(name)
		if err != nil || back != p {
			t.Errorf("ParseTransferPoll(%q) = %v, %v", name, back, err)
		}
	}
	if s := TransferPoll(9).String(); s != "TransferPoll(9)" {
		t.Errorf("unknown state renders %q", s)
	}
	if _, err := ParseTransferPoll("success"); err == nil {
		t.Error("names are case-sensitive")
	}
	b, err := json.Marshal(struct{ S TransferPoll }{Success})
	if err != nil || string(b) != `{"S":"Success"}` {
		t.Errorf("json: %s, %v", b, err)
	}
	var v struct{ S TransferPoll }
	if err := json.Unmarshal([]byte(`{"S":"WaitingForInput"}`), &v); err != nil || v.S != WaitingForInput {
		t.Errorf("json decode: %v, %v", v.S, err)
	}
	if _, err := json.Marshal(TransferPoll(-1)); err == nil {
		t.Error("marshalling an unknown state must fail")
	}
}

func TestStatusFramesGolden(t *testing.T) {
	s := Status{Room: 7301, State: Success, PrefillTPRank: 3, BootstrapToken: 128000, SpecCandidateIDs: []int32{11, -1}}
	want := frames("7301", "5", "3", "128000", lei32(11, -1))
	if got := s.Frames(); !equalFrames(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	// A failure carries no token and no candidates: "-1" and an empty frame.
	f := Status{Room: 7301, State: Failed, PrefillTPRank: 0, BootstrapToken: NoBootstrapToken}
	want = frames("7301", "0", "0", "-1", "")
	if got := f.Frames(); !equalFrames(got, want) {
		t.Fatalf("failure: got %q, want %q", got, want)
	}
}

func TestDecodeStatus(t *testing.T) {
	cases := []struct {
		name string
		in   [][]byte
		want Status
	}{
		{"five frames", frames("7301", "5", "3", "128000", lei32(11, -1)), Status{Room: 7301, State: Success, PrefillTPRank: 3, BootstrapToken: 128000, SpecCandidateIDs: []int32{11, -1}}},
		{"empty candidates", frames("7301", "5", "3", "9", ""), Status{Room: 7301, State: Success, PrefillTPRank: 3, BootstrapToken: 9, SpecCandidateIDs: nil}},
		{"four frames", frames("7301", "0", "1", "9"), Status{Room: 7301, State: Failed, PrefillTPRank: 1, BootstrapToken: 9, SpecCandidateIDs: nil}},
		{"three frames", frames("7301", "3", "1"), Status{Room: 7301, State: WaitingForInput, PrefillTPRank: 1, BootstrapToken: NoBootstrapToken, SpecCandidateIDs: nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeStatus(c.in)
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	bad := []struct {
		name   string
		in     [][]byte
		reason Reason
		frame  int
	}{
		{"two frames", frames("1", "5"), ReasonFrameCount, -1},
		{"six frames", frames("1", "5", "0", "-1", "", ""), ReasonFrameCount, -1},
		{"room text", frames("r", "5", "0"), ReasonNotAnInteger, 0},
		{"status six", frames("1", "6", "0"), ReasonUnknownStatus, 1},
		{"status negative", frames("1", "-1", "0"), ReasonUnknownStatus, 1},
		{"status huge", frames("1", "4294967301", "0"), ReasonUnknownStatus, 1},
		{"status name", frames("1", "Success", "0"), ReasonNotAnInteger, 1},
		{"rank negative", frames("1", "5", "-2"), ReasonOutOfRange, 2},
		{"rank empty", frames("1", "5", ""), ReasonNotAnInteger, 2},
		{"token empty", frames("1", "5", "0", ""), ReasonNotAnInteger, 3},
		{"token below -1", frames("1", "5", "0", "-2"), ReasonOutOfRange, 3},
		{"candidates misaligned", frames("1", "5", "0", "7", "abcde"), ReasonMisalignedArray, 4},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeStatus(c.in)
			wantReason(t, err, c.reason, c.frame)
		})
	}
}

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

package prefillpeer

import (
	"reflect"
	"testing"

	"github.com/pdtopo/pdtopo/pkg/kvwire"
)

func TestSendFramesReachesADecodeRank(t *testing.T) {
	noLeaks(t)
	d := newDecodeRank(t, "127.0.0.1:15500")
	endpoint := kvwire.Endpoint("127.0.0.1", d.port)
	forged := [][]byte{[]byte("77"), []byte("5"), []byte("63"), []byte("1"), []byte("\x01\x02\x03")}
	if err := SendFrames(endpoint, forged); err != nil {
		t.Fatal(err)
	}
	got, ok := d.recv(answerWithin)
	if !ok || !reflect.DeepEqual(got, forged) {
		t.Fatalf("received %q, want %q", got, forged)
	}
	if _, err := kvwire.DecodeStatus(got); kvwire.ReasonOf(err) != kvwire.ReasonMisalignedArray {
		t.Fatalf("forged status decodes with %v", err)
	}
	s := kvwire.Status{Room: 1, State: kvwire.Success, PrefillTPRank: 9, BootstrapToken: 3}
	if err := SendStatus(endpoint, s); err != nil {
		t.Fatal(err)
	}
	if got := d.recvStatus(answerWithin); !reflect.DeepEqual(got, s) {
		t.Fatalf("status %+v", got)
	}
	if err := SendFrames(endpoint, nil); err == nil {
		t.Fatal("a message without frames was sent")
	}
}

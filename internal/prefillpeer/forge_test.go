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

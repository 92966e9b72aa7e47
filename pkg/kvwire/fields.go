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
	"math"
	"strings"
)

const maxInt64 = math.MaxInt64

// CheckText is the encode-side twin of FrameReader.Text.
func CheckText(kind MessageKind, frame int, field, s string) error {
	if _, err := (FrameReader{kind, [][]byte{[]byte(s)}}).Text(0, field); err != nil {
		err.Frame = frame
		return err
	}
	return nil
}

// CheckPort requires a TCP port in 1..65535.
func CheckPort(kind MessageKind, frame int, field string, port int) error {
	if port < 1 || port > math.MaxUint16 {
		return FrameError(kind, frame, field, ReasonOutOfRange, "%d is outside [1, 65535]", port)
	}
	return nil
}

// CheckSessionID requires "host:port" with exactly one colon. The reference
// prefill shards transfers by int(session_id.split(":")[1]) and crashes its
// scheduler when that is not an integer, so an IPv6 literal or a bare host
// must never reach it.
func CheckSessionID(kind MessageKind, frame int, s string) error {
	host, port, ok := strings.Cut(s, ":")
	if !ok || host == "" || strings.Contains(port, ":") {
		return FrameError(kind, frame, "session_id", ReasonInvalidValue, "%q is not host:port with a single colon", s)
	}
	v, isInt, _ := ParseDecimal([]byte(port))
	if !isInt || v < 0 || v > math.MaxUint16 || port[0] == '+' || port[0] == '-' {
		return FrameError(kind, frame, "session_id", ReasonInvalidValue, "%q: port %q is not a number in [0, 65535]", s, port)
	}
	return nil
}

// CheckDecodeIP rejects a ':' in decode_ip: the reference prefill answers to
// decode_ip.split(":")[0], so an IPv6 literal would send every status of the
// room to the wrong host, silently.
func CheckDecodeIP(kind MessageKind, frame int, ip string) error { //nolint:unparam // the frame is the caller's, as for every field check; decode_ip happens to be frame 1 of each message that has it
	if strings.Contains(ip, ":") {
		return FrameError(kind, frame, "decode_ip", ReasonInvalidValue, "%q holds ':'; the reference answers to the part before it", ip)
	}
	return nil
}

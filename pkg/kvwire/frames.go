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

// The registration's shape is the same on both wires: eight frames, the
// first the text "None" where a request has its room.

// RegistrationRoom is frame 0 of a registration: the text the reference
// compares the room frame against to tell a registration from a request.
const RegistrationRoom = "None"

// RegistrationFrames is the number of frames of a registration.
const RegistrationFrames = 8

// IsRegistration reports whether a multipart message is a registration
// rather than a request, the way the reference's bootstrap thread decides.
func IsRegistration(frames [][]byte) bool {
	return len(frames) > 0 && string(frames[0]) == RegistrationRoom
}

// SliceFrames cuts buf at ends into frames whose capacity stops at their own
// end, so that appending to one frame can never overwrite the next.
func SliceFrames(dst [][]byte, buf []byte, ends []int) [][]byte {
	start := 0
	for _, end := range ends {
		dst = append(dst, buf[start:end:end])
		start = end
	}
	return dst
}

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
	"fmt"
	"strconv"
)

// TransferPoll is the state of a room's transfer, as numbered on the wire.
// On the decode side a room's state only moves up, except that Failed is
// sticky.
type TransferPoll int

const (
	Failed TransferPoll = iota
	Bootstrapping
	Bootstrapped
	WaitingForInput
	Transferring
	Success
)

var transferPollNames = [...]string{"Failed", "Bootstrapping", "Bootstrapped", "WaitingForInput", "Transferring", "Success"}

// Valid reports whether p is one of the six states.
func (p TransferPoll) Valid() bool { return p >= Failed && p <= Success }

// String returns the state's name ("Success"), or "TransferPoll(7)" for a
// number that is not a state.
func (p TransferPoll) String() string {
	if p.Valid() {
		return transferPollNames[p]
	}
	return "TransferPoll(" + strconv.Itoa(int(p)) + ")"
}

// Finished reports whether the room has concluded (Success or Failed).
func (p TransferPoll) Finished() bool { return p == Success || p == Failed }

// ParseTransferPoll reads a state's name, as String writes it.
func ParseTransferPoll(name string) (TransferPoll, error) {
	for i, n := range transferPollNames {
		if n == name {
			return TransferPoll(i), nil
		}
	}
	return 0, fmt.Errorf("kvwire: %q is not a TransferPoll state (want one of %v)", name, transferPollNames)
}

// MarshalText writes the state's name, so that JSON APIs show "Success".
func (p TransferPoll) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, fmt.Errorf("kvwire: %d is not a TransferPoll state", int(p))
	}
	return []byte(transferPollNames[p]), nil
}

// UnmarshalText reads a state's name.
func (p *TransferPoll) UnmarshalText(text []byte) error {
	v, err := ParseTransferPoll(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

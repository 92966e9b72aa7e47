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

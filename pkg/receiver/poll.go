package receiver

import "github.com/pdtopo/pdtopo/pkg/kvwire"

// TransferPoll is the status of a room, numbered as on the wire.
type TransferPoll = kvwire.TransferPoll

// The six states, as the engine and the prefill ranks number them.
const (
	Failed          = kvwire.Failed
	Bootstrapping   = kvwire.Bootstrapping
	Bootstrapped    = kvwire.Bootstrapped
	WaitingForInput = kvwire.WaitingForInput
	Transferring    = kvwire.Transferring
	Success         = kvwire.Success
)

package receiver

import (
	"errors"
	"fmt"
)

// ErrorCode is a stable code for why a call on the Manager was refused. The
// local API maps codes to HTTP status codes without parsing messages.
type ErrorCode string

const (
	CodeInvalidArgument         ErrorCode = "InvalidArgument"
	CodeEngineNotRegistered     ErrorCode = "EngineNotRegistered"
	CodeEngineAlreadyRegistered ErrorCode = "EngineAlreadyRegistered"
	CodeNoPlan                  ErrorCode = "NoPlan"
	CodeRoomExists              ErrorCode = "RoomExists"
	CodeRoomNotFound            ErrorCode = "RoomNotFound"
	CodeRoomNotBootstrapped     ErrorCode = "RoomNotBootstrapped"
	CodeRoomAlreadyRequested    ErrorCode = "RoomAlreadyRequested"
	CodeRoomFinished            ErrorCode = "RoomFinished"
	CodeTooManyRooms            ErrorCode = "TooManyRooms"
	CodeClosed                  ErrorCode = "Closed"
)

// Error is a refused call: a stable code and a message a person can act on.
type Error struct {
	Code    ErrorCode
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

func errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of a *Error in err's chain, or "" for other errors.
func CodeOf(err error) ErrorCode {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

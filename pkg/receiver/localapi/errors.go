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

package localapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/pdtopo/pdtopo/pkg/receiver"
)

// ErrorBody is every error answer: {"error": {"code": ..., "message": ...}}.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries a stable code (receiver.ErrorCode, or one of this
// package's) and a message a person can act on.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Codes of errors found before the Manager is reached.
const (
	CodeBadRequestBody   = "BadRequestBody"
	CodeBodyTooLarge     = "BodyTooLarge"
	CodeNoSuchEndpoint   = "NoSuchEndpoint"
	CodeMethodNotAllowed = "MethodNotAllowed"
	CodeInternalError    = "InternalError"
)

// statusOf maps a Manager error code to its HTTP status.
var statusOf = map[receiver.ErrorCode]int{
	receiver.CodeInvalidArgument:      http.StatusBadRequest,
	receiver.CodeEngineNotRegistered:  http.StatusConflict,
	receiver.CodeStreamEnded:          http.StatusConflict,
	receiver.CodeNoPlanLoaded:         http.StatusServiceUnavailable,
	receiver.CodeRoomExists:           http.StatusConflict,
	receiver.CodeRoomNotFound:         http.StatusNotFound,
	receiver.CodeRoomAlreadyRequested: http.StatusConflict,
	receiver.CodeRoomFinished:         http.StatusConflict,
	receiver.CodeTooManyRooms:         http.StatusServiceUnavailable,
	receiver.CodeAgentShuttingDown:    http.StatusServiceUnavailable,
	receiver.CodeWireMismatch:         http.StatusConflict,
	receiver.CodeContractMismatch:     http.StatusConflict,
	receiver.CodeDecodeLayoutMismatch: http.StatusConflict,
	receiver.CodeManifestRefused:      http.StatusBadRequest,
}

func writeError(w http.ResponseWriter, err error) {
	writeJSONError(w, httpStatusOf(err), errorCodeOf(err), errorMessage(err))
}

// httpStatusOf is the HTTP status the API answers err with.
func httpStatusOf(err error) int {
	var be *bodyError
	var re *receiver.Error
	switch {
	case errors.As(err, &be) && be.tooLarge:
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &be):
		return http.StatusBadRequest
	case errors.As(err, &re):
		if status, ok := statusOf[re.Code]; ok {
			return status
		}
	}
	return http.StatusInternalServerError
}

// errorCodeOf and errorMessage are the code and message the API answers
// err with.
func errorCodeOf(err error) string {
	var be *bodyError
	switch {
	case errors.As(err, &be) && be.tooLarge:
		return CodeBodyTooLarge
	case errors.As(err, &be):
		return CodeBadRequestBody
	}
	return errorCode(err)
}

func errorMessage(err error) string {
	var be *bodyError
	var re *receiver.Error
	switch {
	case errors.As(err, &be):
		return be.msg
	case errors.As(err, &re):
		return re.Message
	}
	return err.Error()
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, ErrorBody{Error: ErrorDetail{Code: code, Message: msg}})
}

var jsonContentType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only plain values are written
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"InternalError","message":"encoding the answer failed"}}`)
	}
	writeRaw(w, status, append(b, '\n'))
}

// writeRaw writes an encoded JSON answer.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = jsonContentType // canonical key: no allocation
	w.WriteHeader(status)
	_, _ = w.Write(body) // fails only when the client has gone: no one to tell
}

package server

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Error codes every JSON error body carries in error.code. Clients branch on
// the code, never on the message.
const (
	CodeBadRequest       = "bad_request"
	CodeInvalidJSON      = "invalid_json"
	CodeUnauthorized     = "unauthorized"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeBodyTooLarge     = "body_too_large"
	CodeBatchTooLarge    = "batch_too_large"
	CodeUnknownEnv       = "unknown_environment"
	CodeUnknownExample   = "unknown_example"
	CodeInvalidItem      = "invalid_item"
	CodeCompletionSize   = "completion_too_large"
	CodeScoreFailed      = "score_failed"
	CodeNotReady         = "not_ready"
	CodeTimeout          = "timeout"
	CodeCanceled         = "canceled"
	CodeForbiddenTarget  = "forbidden_target"
	CodeModelError       = "model_error"
	CodeBusy             = "busy"
	CodeInternal         = "internal"
)

// ErrorBody is the payload of every non-2xx response.
type ErrorBody struct {
	Error     APIError `json:"error"`
	RequestID string   `json:"request_id"`
}

// APIError is a machine-readable code and a human-readable explanation. It is
// also the per-item error of batch endpoints.
type APIError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }

func apiErrorf(code, format string, args ...any) *APIError {
	return &APIError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// newRequestID returns 16 random hex digits.
func newRequestID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(b[:])
}

// validRequestID accepts a caller's id only when it is short and plain, so it
// can go into logs and headers unescaped.
func validRequestID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// writeJSON encodes v into memory first so an encoding failure can still
// become a clean 500 instead of half a body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		status = http.StatusInternalServerError
		fmt.Fprintf(&buf, `{"error":{"code":%q,"message":%q},"request_id":%q}`+"\n",
			CodeInternal, "encode response: "+err.Error(), w.Header().Get("X-Request-Id"))
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, r *http.Request, status int, e *APIError) {
	if rec, ok := w.(*statusRecorder); ok && e != nil {
		rec.errCode = e.Code
	}
	writeJSON(w, status, ErrorBody{Error: *e, RequestID: requestID(r.Context())})
}

// decodeBody reads one JSON value from the (already size-limited) body into
// v. The returned error is ready to send: 413 for an oversized body, 400 with
// the offending field for type errors.
func decodeBody(r *http.Request, v any) (int, *APIError) {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if dec.More() {
		return http.StatusBadRequest, apiErrorf(CodeInvalidJSON, "request body holds more than one JSON value")
	}
	return 0, nil
}

func decodeError(err error) (int, *APIError) {
	var mbe *http.MaxBytesError
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, apiErrorf(CodeBodyTooLarge,
			"request body exceeds %d bytes: send smaller batches or raise --max-body", mbe.Limit)
	case errors.As(err, &ute):
		field := ute.Field
		if field == "" {
			field = "(top level)"
		}
		return http.StatusBadRequest, apiErrorf(CodeInvalidJSON, "field %q: expected %s, got JSON %s", field, ute.Type, ute.Value)
	case errors.As(err, &se):
		return http.StatusBadRequest, apiErrorf(CodeInvalidJSON, "malformed JSON at byte %d: %v", se.Offset, err)
	case errors.Is(err, io.EOF):
		return http.StatusBadRequest, apiErrorf(CodeInvalidJSON, "request body is empty: send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return http.StatusBadRequest, apiErrorf(CodeInvalidJSON, "request body ends in the middle of a JSON value")
	default:
		return http.StatusBadRequest, apiErrorf(CodeInvalidJSON, "read request body: %v", err)
	}
}

package apierr

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"runtime/debug"
)

// APIError is an error meant for the client.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string { return e.Message }

// HandlerFunc is an HTTP handler that may fail.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

type body struct {
	Error     string `json:"error"`
	Detail    string `json:"detail,omitempty"`
	RequestID string `json:"request_id"`
}

func requestID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func write(w http.ResponseWriter, status int, b body) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(b)
}

// Wrap adapts h, turning its errors into JSON responses.
func Wrap(h HandlerFunc, logger *log.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := requestID()
		defer func() {
			if p := recover(); p != nil {
				write(w, http.StatusInternalServerError, body{Error: fmt.Sprint(p), Detail: string(debug.Stack()), RequestID: id})
			}
		}()
		err := h(w, r)
		if err == nil {
			return
		}
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			write(w, apiErr.Status, body{Error: apiErr.Message, RequestID: id})
			return
		}
		write(w, http.StatusInternalServerError, body{Error: "internal error", Detail: err.Error(), RequestID: id})
	})
}

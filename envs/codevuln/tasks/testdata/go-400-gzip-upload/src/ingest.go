package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Limits of one batch.
const (
	MaxCompressed   = 1 << 20
	MaxDecompressed = 8 << 20
	MaxEvents       = 10000
)

// Event is one telemetry measurement.
type Event struct {
	Device string  `json:"device"`
	Metric string  `json:"metric"`
	Value  float64 `json:"value"`
}

// Sink stores accepted events.
type Sink interface {
	Write(events []Event) error
}

// Handler serves POST /ingest.
func Handler(sink Sink) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		var body io.Reader = http.MaxBytesReader(w, r.Body, MaxCompressed)
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(body)
			if err != nil {
				http.Error(w, "bad gzip", http.StatusBadRequest)
				return
			}
			defer zr.Close()
			body = zr
		}
		data, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		if len(data) > MaxDecompressed {
			http.Error(w, "batch too large", http.StatusRequestEntityTooLarge)
			return
		}
		var events []Event
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), MaxDecompressed)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var e Event
			if err := json.Unmarshal(line, &e); err != nil || e.Device == "" || e.Metric == "" {
				http.Error(w, "bad event", http.StatusBadRequest)
				return
			}
			events = append(events, e)
		}
		if len(events) > MaxEvents {
			http.Error(w, "too many events", http.StatusRequestEntityTooLarge)
			return
		}
		if err := sink.Write(events); err != nil {
			http.Error(w, "sink failed", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "%d\n", len(events))
	})
}

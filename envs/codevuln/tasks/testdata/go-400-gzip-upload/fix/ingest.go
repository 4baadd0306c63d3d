package ingest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
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

var errTooLarge = errors.New("batch too large")

// capped fails once more than n bytes have been read, instead of silently
// truncating like io.LimitReader, so an oversized batch is rejected rather
// than half-imported.
type capped struct {
	r io.Reader
	n int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.n < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.n+1 {
		p = p[:c.n+1]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	if c.n < 0 {
		return n, errTooLarge
	}
	return n, err
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
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					http.Error(w, "batch too large", http.StatusRequestEntityTooLarge)
					return
				}
				http.Error(w, "bad gzip", http.StatusBadRequest)
				return
			}
			defer zr.Close()
			body = zr
		}
		// Stream line by line through the decompressed-size cap: memory stays
		// bounded by one line and the accepted events.
		sc := bufio.NewScanner(&capped{r: body, n: MaxDecompressed})
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		var events []Event
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			if len(events) == MaxEvents {
				http.Error(w, "too many events", http.StatusRequestEntityTooLarge)
				return
			}
			var e Event
			if err := json.Unmarshal(line, &e); err != nil || e.Device == "" || e.Metric == "" {
				http.Error(w, "bad event", http.StatusBadRequest)
				return
			}
			events = append(events, e)
		}
		if err := sc.Err(); err != nil {
			var mbe *http.MaxBytesError
			if errors.Is(err, errTooLarge) || errors.As(err, &mbe) || errors.Is(err, bufio.ErrTooLong) {
				http.Error(w, "batch too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "read error", http.StatusBadRequest)
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

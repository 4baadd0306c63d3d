package importer

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/mail"
	"strings"
)

// Limits of one import.
const (
	MaxBodyBytes = 1 << 20
	MaxRows      = 5000
)

// Contact is one imported row.
type Contact struct{ Name, Email, Phone string }

// Store saves contacts.
type Store interface {
	Save(cs []Contact) error
}

var errTooMany = errors.New("too many rows")

// Handler serves POST /contacts/import.
func Handler(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.ContentLength > MaxBodyBytes {
			http.Error(w, "upload too large", http.StatusRequestEntityTooLarge)
			return
		}
		// Stream the body through a hard cap and parse record by record, so
		// memory is bounded by the limits whatever the client sends.
		body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		cr := csv.NewReader(body)
		cr.ReuseRecord = true
		var ok []Contact
		rejected, rows := 0, -1
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "upload too large", http.StatusRequestEntityTooLarge)
				return
			}
			if err != nil {
				http.Error(w, "malformed CSV", http.StatusBadRequest)
				return
			}
			rows++
			if rows == 0 {
				if strings.Join(rec, ",") != "name,email,phone" {
					http.Error(w, "missing header name,email,phone", http.StatusBadRequest)
					return
				}
				continue
			}
			if rows > MaxRows {
				http.Error(w, errTooMany.Error(), http.StatusRequestEntityTooLarge)
				return
			}
			c, err := parse(rec)
			if err != nil {
				rejected++
				continue
			}
			ok = append(ok, c)
		}
		if rows < 0 {
			http.Error(w, "missing header name,email,phone", http.StatusBadRequest)
			return
		}
		if err := store.Save(ok); err != nil {
			http.Error(w, "store failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]int{"imported": len(ok), "rejected": rejected})
	})
}

func parse(rec []string) (Contact, error) {
	if len(rec) != 3 {
		return Contact{}, errors.New("want 3 fields")
	}
	name, email := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
	if name == "" {
		return Contact{}, errors.New("empty name")
	}
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email {
		return Contact{}, errors.New("bad email")
	}
	return Contact{Name: name, Email: email, Phone: strings.TrimSpace(rec[2])}, nil
}

package importer

import (
	"bytes"
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

// Handler serves POST /contacts/import.
func Handler(store Store) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
		if len(body) > MaxBodyBytes {
			http.Error(w, "upload too large", http.StatusRequestEntityTooLarge)
			return
		}
		records, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
		if err != nil {
			http.Error(w, "malformed CSV", http.StatusBadRequest)
			return
		}
		if len(records) == 0 || strings.Join(records[0], ",") != "name,email,phone" {
			http.Error(w, "missing header name,email,phone", http.StatusBadRequest)
			return
		}
		if len(records)-1 > MaxRows {
			http.Error(w, "too many rows", http.StatusRequestEntityTooLarge)
			return
		}
		var ok []Contact
		rejected := 0
		for _, rec := range records[1:] {
			c, err := parse(rec)
			if err != nil {
				rejected++
				continue
			}
			ok = append(ok, c)
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

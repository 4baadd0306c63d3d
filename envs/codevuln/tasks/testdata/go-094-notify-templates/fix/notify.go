package notify

import (
	"errors"
	"fmt"
	"strings"
)

// Account is the customer account behind an order.
type Account struct {
	Email      string
	ResetToken string
	APIKey     string
}

// Order is the data available to notification templates.
type Order struct {
	Name    string
	OrderID string
	Status  string
	Total   string
	Account *Account
}

// MaxTemplate bounds a tenant template.
const MaxTemplate = 2000

// Render fills tmpl with the order's data. Tenant text is data, not code: it
// is scanned for {{ .Field }} placeholders from a fixed list and nothing else
// is ever evaluated.
func Render(tmpl string, o Order) (string, error) {
	if len(tmpl) > MaxTemplate {
		return "", errors.New("notify: template too long")
	}
	fields := map[string]string{".Name": o.Name, ".OrderID": o.OrderID, ".Status": o.Status, ".Total": o.Total}
	var sb strings.Builder
	rest := tmpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			sb.WriteString(rest)
			return sb.String(), nil
		}
		sb.WriteString(rest[:i])
		j := strings.Index(rest[i:], "}}")
		if j < 0 {
			return "", errors.New("notify: unclosed {{")
		}
		name := strings.TrimSpace(rest[i+2 : i+j])
		v, ok := fields[name]
		if !ok {
			return "", fmt.Errorf("notify: unknown placeholder {{%s}}", name)
		}
		sb.WriteString(v)
		rest = rest[i+j+2:]
	}
}

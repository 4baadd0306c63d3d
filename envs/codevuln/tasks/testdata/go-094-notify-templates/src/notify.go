package notify

import (
	"errors"
	"os"
	"strings"
	"text/template"
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

var helpers = template.FuncMap{
	"upper": strings.ToUpper,
	"env":   os.Getenv,
	"include": func(path string) (string, error) {
		b, err := os.ReadFile(path)
		return string(b), err
	},
}

// Render fills tmpl with the order's data.
func Render(tmpl string, o Order) (string, error) {
	if len(tmpl) > MaxTemplate {
		return "", errors.New("notify: template too long")
	}
	t, err := template.New("tenant").Funcs(helpers).Parse(tmpl)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	if err := t.Execute(&sb, o); err != nil {
		return "", err
	}
	return sb.String(), nil
}

package notify

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func order() Order {
	return Order{Name: "Ann", OrderID: "A-7", Status: "paid", Total: "9.99",
		Account: &Account{Email: "ann@example.com", ResetToken: "RESET-TOKEN-SECRET", APIKey: "sk_live_SECRETKEY"}}
}

func TestInjection(t *testing.T) {
	t.Setenv("SVB_DB_PASSWORD", "ENV-SECRET-VALUE")
	secretFile := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secretFile, []byte("FILE-SECRET-VALUE"), 0o600)
	secrets := []string{"ENV-SECRET-VALUE", "FILE-SECRET-VALUE", "RESET-TOKEN-SECRET", "sk_live_SECRETKEY", "ann@example.com"}
	for _, tmpl := range []string{
		`{{env "SVB_DB_PASSWORD"}}`,
		`{{include "` + secretFile + `"}}`,
		`{{.Account.ResetToken}}`,
		`{{.Account.APIKey}}`,
		`{{printf "%v" .Account}}`,
		`{{.}}`,
		`{{with .Account}}{{.Email}}{{end}}`,
		`{{upper .Account.ResetToken}}`,
		`{{define "x"}}{{.Account.APIKey}}{{end}}{{template "x" .}}`,
		`Hi {{.Name}} {{$a := .Account}}{{$a.ResetToken}}`,
		`{{/* comment */}}{{index (printf "%s" .Account.APIKey) 0}}`,
	} {
		out, err := Render(tmpl, order())
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("template %q leaked %q: %q", tmpl, s, out)
			}
		}
		if err == nil {
			t.Errorf("template %q accepted (output %q)", tmpl, out)
		}
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(94, 18))
	o := order()
	values := map[string]string{".Name": o.Name, ".OrderID": o.OrderID, ".Status": o.Status, ".Total": o.Total}
	names := []string{".Name", ".OrderID", ".Status", ".Total"}
	const text = "abc XYZ,.!{}()%$-"
	for i := 0; i < 300; i++ {
		var tmpl, want strings.Builder
		for j := 0; j < 1+rng.IntN(6); j++ {
			n := rng.IntN(8)
			for k := 0; k < n; k++ {
				c := text[rng.IntN(len(text))]
				// Avoid accidentally writing "{{" or "}}" in the literal text.
				if (c == '{' || c == '}') && strings.HasSuffix(tmpl.String(), string(c)) {
					c = 'x'
				}
				tmpl.WriteByte(c)
				want.WriteByte(c)
			}
			if strings.HasSuffix(tmpl.String(), "{") {
				tmpl.WriteByte(' ')
				want.WriteByte(' ')
			}
			name := names[rng.IntN(len(names))]
			sp := strings.Repeat(" ", rng.IntN(2))
			fmt.Fprintf(&tmpl, "{{%s%s%s}}", sp, name, sp)
			want.WriteString(values[name])
		}
		got, err := Render(tmpl.String(), o)
		if err != nil || got != want.String() {
			t.Fatalf("Render(%q) = %q, %v; want %q", tmpl.String(), got, err, want.String())
		}
		bad := tmpl.String() + "{{" + []string{".Account.APIKey", "env \"HOME\"", "printf \"%v\" .", ".Account"}[rng.IntN(4)] + "}}"
		if out, err := Render(bad, o); err == nil || strings.Contains(out, "SECRET") {
			t.Fatalf("Render(%q) = %q, %v", bad, out, err)
		}
	}
}

package notify

import "testing"

func TestRender(t *testing.T) {
	o := Order{Name: "Ann", OrderID: "A-1001", Status: "shipped", Total: "42.50 EUR", Account: &Account{Email: "ann@example.com"}}
	got, err := Render("Hi {{.Name}}, order {{.OrderID}} is {{ .Status }} (total {{.Total}})", o)
	if err != nil || got != "Hi Ann, order A-1001 is shipped (total 42.50 EUR)" {
		t.Fatalf("Render = %q, %v", got, err)
	}
	if got, err := Render("No placeholders {here}.", o); err != nil || got != "No placeholders {here}." {
		t.Fatalf("plain text = %q, %v", got, err)
	}
	if _, err := Render("Broken {{.Name", o); err == nil {
		t.Fatal("unclosed action accepted")
	}
}

package credstore

import "testing"

func TestRoundTrip(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword("correct horse battery", h) || CheckPassword("correct horse batterY", h) {
		t.Fatal("verification wrong")
	}
	if NeedsUpgrade(h) {
		t.Error("fresh hash needs upgrade")
	}
	if _, err := HashPassword("short"); err == nil {
		t.Error("short password accepted")
	}
	if CheckPassword("anything", "garbage") {
		t.Error("garbage stored value verified")
	}
}

func TestLegacy(t *testing.T) {
	// md5("password123")
	if !CheckPassword("password123", "md5$482c811da5d5b4bc6d497ffa98491e38") {
		t.Fatal("legacy hash no longer verifies")
	}
}

package codes

import (
	"regexp"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	g := NewGenerator(time.Now().UnixNano())
	if c := g.InviteCode(); !regexp.MustCompile(`^[` + Alphabet + `]{10}$`).MatchString(c) {
		t.Fatalf("invite %q", c)
	}
	rc := g.RecoveryCodes(8)
	if len(rc) != 8 {
		t.Fatalf("%d codes", len(rc))
	}
	re := regexp.MustCompile(`^[` + Alphabet + `]{4}-[` + Alphabet + `]{4}$`)
	for _, c := range rc {
		if !re.MatchString(c) {
			t.Errorf("recovery code %q", c)
		}
	}
}

package search

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(t *testing.T) (dir, marker string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "repo")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("plain line\n$(id) and `id`\nquote ' here\n-e dash\n--help me\n"), 0o644)
	os.WriteFile(filepath.Join(base, "outside.txt"), []byte("plain line outside\n"), 0o644)
	return dir, filepath.Join(base, "pwned")
}

func TestPatternInjection(t *testing.T) {
	dir, marker := fixture(t)
	for _, p := range []string{
		"'; touch " + marker + "; echo '",
		"x' . ; touch " + marker + " #",
		"$(touch " + marker + ")",
		"`touch " + marker + "`",
		"' ; touch " + marker + " ; '",
	} {
		Search(context.Background(), dir, p, "")
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("pattern %q executed a command", p)
		}
	}
	for _, g := range []string{"*.txt; touch " + marker, "*.txt && touch " + marker, "$(touch " + marker + ")", "x|touch " + marker} {
		Search(context.Background(), dir, "plain", g)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("glob %q executed a command", g)
		}
	}
}

func TestOptionInjection(t *testing.T) {
	dir, _ := fixture(t)
	// A pattern that looks like a grep option is searched for literally.
	for p, want := range map[string]int{"-e": 1, "--help": 1, "$(id)": 1, "`id`": 1, "'": 1} {
		got, err := Search(context.Background(), dir, p, "")
		if err != nil || len(got) != want {
			t.Errorf("Search(%q) = %+v, %v; want %d literal match", p, got, err, want)
		}
	}
	// Options must not widen the search beyond repoDir.
	got, _ := Search(context.Background(), dir, "plain", "*.txt' ..'")
	for _, m := range got {
		if strings.Contains(m.Text, "outside") {
			t.Errorf("search escaped the repository: %+v", m)
		}
	}
}

func TestGenerated(t *testing.T) {
	dir, marker := fixture(t)
	rng := rand.New(rand.NewPCG(78, 2))
	words := []string{"alpha", "b'eta", "ga$mma", "del;ta", "eps`ilon", "-zeta"}
	counts := map[string]int{}
	for f := 0; f < 6; f++ {
		var sb strings.Builder
		for l := 0; l < 10; l++ {
			w := words[rng.IntN(len(words))]
			fmt.Fprintf(&sb, "%d %s\n", l, w)
			counts[w]++
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.log", f)), []byte(sb.String()), 0o644)
	}
	for _, w := range words {
		got, err := Search(context.Background(), dir, w, "*.log")
		if err != nil || len(got) != counts[w] {
			t.Errorf("Search(%q) = %d matches, %v; want %d", w, len(got), err, counts[w])
		}
		inj := w + "'; touch " + marker + "; '"
		Search(context.Background(), dir, inj, "*.log")
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("%q executed a command", inj)
		}
	}
}

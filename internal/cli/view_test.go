package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestViewServesAndStops(t *testing.T) {
	root := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "builtin:heuristic", "-n", "3", "--out", root, "--progress", "none"); code != 0 {
		t.Fatalf("eval: %s", stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, []string{"view", "--root", root, "--addr", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("no URL printed: %q", line)
	}
	url := strings.Fields(line[i:])[0]
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "builtin:heuristic") {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("view exited %d after Ctrl-C", code)
	}
	if code, _, stderr := runCLI(t, "view", "--root", "/nonexistent/svbench"); code != ExitUsage || !strings.Contains(stderr, "--root") {
		t.Fatalf("missing root: exit %d %q", code, stderr)
	}
}

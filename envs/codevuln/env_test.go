package codevuln

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

func TestRegisteredAndInfo(t *testing.T) {
	id, err := env.Default.Resolve("sv-env-code-vulnerability")
	if err != nil || id != ID {
		t.Fatalf("resolve: %q %v", id, err)
	}
	e := testEnv(t)
	in := e.Info()
	if in.Verifiers["sandbox"] == "" || in.Verifiers["python3"] == "" || in.SolvedWhen == "" || len(in.Tools) != 3 {
		t.Errorf("info = %+v", in)
	}
}

func TestLoadRows(t *testing.T) {
	e := testEnv(t)
	ds, err := e.Load(context.Background(), "")
	if err != nil || len(ds.Examples) != len(e.embeddedID) || !strings.HasPrefix(ds.Info.Revision, "sha256:") {
		t.Fatalf("embedded: %v %+v", err, ds.Info)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "rows.jsonl")
	first := e.embeddedID[0]
	os.WriteFile(p, []byte(`{"id":"a","task_id":"`+first+`"}`+"\n"+`{"id":"b","answer":{"task_id":"`+first+`"}}`+"\n"), 0o644)
	ds, err = e.Load(context.Background(), p)
	if err != nil || len(ds.Examples) != 2 || ds.Examples[1].Meta["task_id"] != first || len(ds.Examples[0].Prompt) != 2 {
		t.Fatalf("jsonl: %v %+v", err, ds)
	}
	os.WriteFile(p, []byte(`{"id":"a","task_id":"py-000-nope"}`+"\n"), 0o644)
	if _, err := e.Load(context.Background(), p); err == nil || !strings.Contains(err.Error(), "unknown task") || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("unknown task: %v", err)
	}
	if _, err := e.ParseExample([]byte(`{"id":"x"}`)); err == nil || !strings.Contains(err.Error(), "task_id") {
		t.Errorf("missing task id: %v", err)
	}
}

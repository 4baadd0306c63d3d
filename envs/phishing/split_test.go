package phishing

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

// TestTrainSplitReproducible rebuilds train from its seed without the
// process cache and compares the bytes: a split that drifts between
// processes would give two trainers different data under one revision.
func TestTrainSplitReproducible(t *testing.T) {
	ctx := context.Background()
	ds, err := New().LoadSplit(ctx, env.SplitTrain)
	if err != nil {
		t.Fatal(err)
	}
	rows, drops, err := splitRows()
	if err != nil {
		t.Fatal(err)
	}
	data, err := encodeRows(rows[env.SplitTrain])
	if err != nil {
		t.Fatal(err)
	}
	again, err := encodeRows(mustSplit(t, env.SplitTrain))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, again) {
		t.Fatal("two generations of the train split differ")
	}
	if got, want := ds.Info.Revision, dataset.Revision(data); got != want {
		t.Errorf("train revision %s, the rows hash to %s", got, want)
	}
	// Pinned so that a generator or seed change, or a platform where the
	// generator's output differs, is a failing test and not silently new
	// training data under the old README figures. Update both together.
	if got, want := ds.Info.Revision, trainRevision; got != want {
		t.Errorf("train revision %s, README and this test say %s: if the generator changed on purpose, update both", got, want)
	}
	dev, err := New().LoadSplit(ctx, env.SplitDev)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dev.Info.Revision, devRevision; got != want {
		t.Errorf("dev revision %s, README and this test say %s: if the generator changed on purpose, update both", got, want)
	}
	if ds.Info.ID != "embedded:e4-train" || ds.Info.Split != env.SplitTrain || ds.Info.Rows != len(ds.Examples) {
		t.Errorf("train info %+v", ds.Info)
	}
	if n := len(ds.Examples); n < TrainRows*9/10 {
		t.Errorf("train has %d rows of %d generated (drops %+v)", n, TrainRows, drops[env.SplitTrain])
	}
	t.Logf("train %d rows, dev %d rows; drops %+v", len(rows[env.SplitTrain]), len(rows[env.SplitDev]), drops)
	for i, ex := range ds.Examples {
		if !strings.HasPrefix(ex.ID, "train-") {
			t.Fatalf("row %d id %q lacks the split prefix", i, ex.ID)
		}
	}
}

const (
	trainRevision = "sha256:d40059bef0ce83ed"
	devRevision   = "sha256:bcc4711a64b72807"
)

func mustSplit(t *testing.T, split string) []Row {
	t.Helper()
	r, err := SplitRows(split)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSplitsDisjointFromTest checks what the filter promises, on the
// datasets LoadSplit serves: no id and no prompt of train or dev is a
// test prompt or another split's, exactly or once normalised, and test is
// what Load("") returns.
func TestSplitsDisjointFromTest(t *testing.T) {
	ctx := context.Background()
	e := New()
	mini, err := e.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	test, err := e.LoadSplit(ctx, env.SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	if test.Info.ID != mini.Info.ID || test.Info.Revision != mini.Info.Revision || len(test.Examples) != len(mini.Examples) {
		t.Fatalf("test split %+v is not the mini set %+v", test.Info, mini.Info)
	}
	ids := map[string]string{}
	keys := map[string]string{}
	for _, split := range env.SplitNames() {
		ds := test
		if split != env.SplitTest {
			if ds, err = e.LoadSplit(ctx, split); err != nil {
				t.Fatal(err)
			}
		}
		for _, ex := range ds.Examples {
			if s, ok := ids[ex.ID]; ok {
				t.Errorf("id %s in %s and %s", ex.ID, s, split)
			}
			ids[ex.ID] = split
			k := integrity.Normalise(env.PromptText(ex))
			if s, ok := keys[k]; ok {
				t.Errorf("%s row %s has the prompt of a %s row", split, ex.ID, s)
			}
			keys[k] = split
		}
	}
	if _, err := e.LoadSplit(ctx, "validation"); err == nil {
		t.Error("LoadSplit accepted an unknown split name")
	}
}

// TestLoadSplitConcurrent loads from many goroutines (the server does)
// and edits what it got: the cache must hand each caller its own copy.
func TestLoadSplitConcurrent(t *testing.T) {
	e := New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ds, err := e.LoadSplit(context.Background(), env.SplitDev)
			if err != nil {
				t.Error(err)
				return
			}
			ds.Examples[0].Meta["campaign"] = "edited"
			ds.Examples = ds.Examples[:1]
		}()
	}
	wg.Wait()
	ds, err := e.LoadSplit(context.Background(), env.SplitDev)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Examples[0].Meta["campaign"] == "edited" || len(ds.Examples) != ds.Info.Rows {
		t.Fatal("a caller's edit reached the cached dev split")
	}
}

package dataset

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHashKeyLengthPrefixed(t *testing.T) {
	cases := []struct {
		a, b []string
		same bool
	}{
		{[]string{"ab", "c"}, []string{"a", "bc"}, false},
		{[]string{"x"}, []string{"x"}, true},
		{[]string{"", "x"}, []string{"x", ""}, false},
		{[]string{}, []string{""}, false},
	}
	for _, c := range cases {
		ha, hb := HashKey(c.a...), HashKey(c.b...)
		if len(ha) != 16 {
			t.Fatalf("HashKey(%q) = %q, want 16 hex digits", c.a, ha)
		}
		if (ha == hb) != c.same {
			t.Errorf("HashKey(%q)=%s HashKey(%q)=%s, same=%v want %v", c.a, ha, c.b, hb, ha == hb, c.same)
		}
	}
}

func splitOf(s Split) map[int]string {
	m := map[int]string{}
	for name, idx := range s.Sets() {
		for _, i := range idx {
			m[i] = name
		}
	}
	return m
}

func TestStratifiedSplitProportionsAndPartition(t *testing.T) {
	var keys []string
	sizes := map[string]int{"a|Malicious": 1000, "a|Benign": 333, "b|Malicious": 57, "c|Benign": 7, "d|Benign": 1, "e|Benign": 2}
	for _, k := range slices.Sorted(maps.Keys(sizes)) {
		for i := 0; i < sizes[k]; i++ {
			keys = append(keys, k)
		}
	}
	s := StratifiedSplit(keys, [3]float64{0.7, 0.15, 0.15}, 42)
	where := splitOf(s)
	if len(where) != len(keys) || len(s.Train)+len(s.Dev)+len(s.Test) != len(keys) {
		t.Fatalf("split is not a partition: %d assigned, %d rows", len(where), len(keys))
	}
	n := len(keys)
	want := Allocate(nil, []float64{0.7, 0.15, 0.15}, n)
	if got := []int{len(s.Train), len(s.Dev), len(s.Test)}; !slices.Equal(got, want) {
		t.Errorf("split sizes %v, want %v", got, want)
	}
	// Every stratum is split within one row of its exact quota.
	for k, size := range sizes {
		cnt := map[string]int{}
		for i, key := range keys {
			if key == k {
				cnt[where[i]]++
			}
		}
		for j, name := range SplitNames {
			exact := float64(size) * []float64{0.7, 0.15, 0.15}[j]
			if d := float64(cnt[name]) - exact; d <= -1 || d >= 1 {
				t.Errorf("stratum %s split %s: %d rows, exact quota %.2f", k, name, cnt[name], exact)
			}
		}
	}
	for _, idx := range [][]int{s.Train, s.Dev, s.Test} {
		if !slices.IsSorted(idx) {
			t.Error("split indices are not ascending")
		}
	}
	// Deterministic, and the seed matters.
	if again := StratifiedSplit(keys, [3]float64{70, 15, 15}, 42); !slices.Equal(again.Test, s.Test) {
		t.Error("same seed (ratios unnormalised) gave a different split")
	}
	if other := StratifiedSplit(keys, [3]float64{0.7, 0.15, 0.15}, 43); slices.Equal(other.Test, s.Test) {
		t.Error("a different seed gave the same test split")
	}
}

func TestStratifiedSplitManyTinyStrata(t *testing.T) {
	// 100 singleton strata: global proportions must still hold.
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = fmt.Sprintf("s%03d", i)
	}
	s := StratifiedSplit(keys, [3]float64{0.7, 0.15, 0.15}, 1)
	if len(s.Train) != 70 || len(s.Dev) != 15 || len(s.Test) != 15 {
		t.Fatalf("sizes %d/%d/%d, want 70/15/15", len(s.Train), len(s.Dev), len(s.Test))
	}
	// Held-out singletons are chosen by hash, not by key order.
	if slices.Equal(s.Test, []int{85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99}) {
		t.Error("tiny strata were held out in key order")
	}
}

func TestStratifiedSplitDegenerate(t *testing.T) {
	if s := StratifiedSplit(nil, [3]float64{0.7, 0.15, 0.15}, 1); len(s.Train)+len(s.Dev)+len(s.Test) != 0 {
		t.Error("empty input gave rows")
	}
	s := StratifiedSplit([]string{"a", "a", "b"}, [3]float64{0, 0, 0}, 1)
	if len(s.Train) != 3 {
		t.Errorf("all-zero ratios: train=%v, want every row", s.Train)
	}
	s = StratifiedSplit([]string{"a", "a", "a", "a"}, [3]float64{0, 0, 1}, 1)
	if len(s.Test) != 4 {
		t.Errorf("test-only ratios: %+v", s)
	}
}

func TestAllocate(t *testing.T) {
	cases := []struct {
		name    string
		sizes   []int
		weights []float64
		target  int
		want    []int
	}{
		{"proportional", nil, []float64{0.7, 0.15, 0.15}, 10, []int{7, 2, 1}},
		{"capped redistributes", []int{3, 100}, []float64{0.5, 0.5}, 10, []int{3, 7}},
		{"target above capacity", []int{3, 4}, []float64{1, 1}, 100, []int{3, 4}},
		{"zero weight excluded", []int{10, 10}, []float64{1, 0}, 15, []int{10, 0}},
		{"all zero weights use sizes", []int{30, 10}, []float64{0, 0}, 8, []int{6, 2}},
		{"nothing", []int{5}, []float64{1}, 0, []int{0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Allocate(c.sizes, c.weights, c.target); !slices.Equal(got, c.want) {
				t.Errorf("Allocate(%v, %v, %d) = %v, want %v", c.sizes, c.weights, c.target, got, c.want)
			}
		})
	}
}

func TestStratifiedSample(t *testing.T) {
	var keys, labels []string
	add := func(key, label string, n int) {
		for i := 0; i < n; i++ {
			keys = append(keys, key)
			labels = append(labels, label)
		}
	}
	add("s1", "Malicious", 9000)
	add("s2", "Malicious", 1000)
	add("s1", "Benign", 150)
	add("s3", "Benign", 50)
	bal := map[string]float64{"Malicious": 0.5, "Benign": 0.5}

	got := StratifiedSample(keys, labels, 200, bal, 7)
	count := func(idx []int) map[string]int {
		m := map[string]int{}
		for _, i := range idx {
			m[labels[i]+"/"+keys[i]]++
		}
		return m
	}
	c := count(got)
	if c["Malicious/s1"] != 90 || c["Malicious/s2"] != 10 || c["Benign/s1"] != 75 || c["Benign/s3"] != 25 {
		t.Errorf("balanced sample counts %v", c)
	}
	// Benign has only 200 rows: asking 1000 at 50/50 fills the rest with Malicious.
	c = count(StratifiedSample(keys, labels, 1000, bal, 7))
	if c["Benign/s1"]+c["Benign/s3"] != 200 || c["Malicious/s1"]+c["Malicious/s2"] != 800 {
		t.Errorf("shortfall not redistributed: %v", c)
	}
	// Natural proportions without a balance.
	c = count(StratifiedSample(keys, labels, 1020, nil, 7))
	if c["Malicious/s1"] != 900 || c["Benign/s3"] != 5 {
		t.Errorf("natural-proportion sample counts %v", c)
	}
	if a, b := StratifiedSample(keys, labels, 200, bal, 7), StratifiedSample(keys, labels, 200, bal, 7); !slices.Equal(a, b) {
		t.Error("sample is not deterministic")
	}
	if !slices.IsSorted(got) {
		t.Error("sample indices are not ascending")
	}
	if got := StratifiedSample(keys, labels, 10, map[string]float64{"Other": 1}, 7); len(got) != 0 {
		t.Errorf("labels outside the balance were sampled: %v", got)
	}
}

func TestWriteSplitsAndCommitment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	card := &Card{
		Name: "e1-test", Env: "e1", Version: "1", Created: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Importer: &Producer{Name: "svbench data import e1", Version: "dev", Params: map[string]any{"format": "iot23"}},
		Seed:     3, Licence: "CC BY 4.0",
		Sources: []Source{{Path: "a|b.log", SHA256: "00", Rows: 10, BadRows: 1}},
		Counts:  Counts{Labels: map[string]int{"Malicious": 2, "Benign": 1}},
		Dedup:   &Dedup{Key: "5-tuple", Seen: 10, Dropped: 2},
		Notes:   []string{"tiny"},
	}
	type row struct {
		Q string `json:"question"`
		A string `json:"answer"`
	}
	splits := map[string][]any{
		"train": {row{"<a> & b", "Malicious"}, row{"c", "Benign"}},
		"test":  {json.RawMessage(`{"answer":"Malicious", "question":"d"}`)},
	}
	if err := WriteSplits(dir, splits, card); err != nil {
		t.Fatal(err)
	}
	train, err := os.ReadFile(filepath.Join(dir, "train.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"question\":\"<a> & b\",\"answer\":\"Malicious\"}\n{\"question\":\"c\",\"answer\":\"Benign\"}\n"; string(train) != want {
		t.Errorf("train.jsonl = %q, want %q", train, want)
	}
	var back Card
	b, _ := os.ReadFile(filepath.Join(dir, "card.json"))
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Counts.Splits["train"] != 2 || back.Counts.Splits["test"] != 1 || back.Files["train"].Revision != Revision(train) {
		t.Errorf("card counts/files wrong: %+v %+v", back.Counts.Splits, back.Files)
	}
	f, _ := os.Open(filepath.Join(dir, "train.jsonl"))
	defer f.Close()
	sum, n, err := CommitReader(f, "train.jsonl")
	if err != nil || n != 2 || sum != back.Files["train"].Commitment {
		t.Errorf("CommitReader = %s, %d, %v; card says %s", sum, n, err, back.Files["train"].Commitment)
	}
	// Order and formatting do not change a commitment; content does.
	reordered := "{\"answer\":\"Benign\",  \"question\":\"c\"}\n{\"answer\":\"Malicious\",\"question\":\"<a> & b\"}\n"
	if s2, _, _ := CommitReader(strings.NewReader(reordered), "x"); s2 != sum {
		t.Error("reordered rows changed the commitment")
	}
	if s3, _, _ := CommitReader(strings.NewReader(`{"answer":"Benign","question":"C"}`+"\n"+`{"answer":"Malicious","question":"<a> & b"}`), "x"); s3 == sum {
		t.Error("changed content kept the commitment")
	}
	md, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	for _, want := range []string{"# e1-test", "a\\|b.log", "| train | 2 |", "CC BY 4.0", "Duplicates dropped: 2"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("README.md lacks %q:\n%s", want, md)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if err := WriteSplits(dir, map[string][]any{"../x": nil}, &Card{}); err == nil {
		t.Error("a split name with a path separator was accepted")
	}
}

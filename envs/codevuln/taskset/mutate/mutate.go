// Package mutate synthesises E3 tasks: a clean (secure) Python or Go
// template is instantiated with seeded names, and a CWE-specific mutation
// turns it into the vulnerable variant the model must repair. The clean code
// is the reference fix; behavioural and security tests come with each
// template, so every generated task is tested, and the package's tests prove
// the task contract on what it generates.
package mutate

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strings"
	"text/template"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

//go:embed templates
var templateFS embed.FS

// Mutation describes one way of making clean code vulnerable.
type Mutation struct {
	Key         string // template directory, e.g. "sqli"
	Language    string // taskset.Python (default) or taskset.Go
	CWE         string
	Severity    string
	Difficulty  string
	Title       string // templated
	Description string // templated; never names the fix
	File        string // templated module file name
	API         []string
}

// Mutations lists the generator's mutation kinds in a fixed order.
var Mutations = []Mutation{
	{Key: "sqli", CWE: "CWE-89", Severity: "high", Difficulty: "easy",
		Title:       "SQL injection in the [[.Entity]] lookup",
		Description: "[[.File]] stores [[.Entity]]s in SQLite; find_[[.Entity]]s(conn, owner) lists an owner's [[.Entity]]s. A security report says find_[[.Entity]]s is vulnerable to SQL injection through owner. Repair it without changing its results or signature.",
		File:        "[[.Entity]]_store.py",
		API:         []string{"create_schema(conn)", "add_[[.Entity]](conn, [[.Field]], owner)", "find_[[.Entity]]s(conn, owner)"}},
	{Key: "path", CWE: "CWE-22", Severity: "high", Difficulty: "easy",
		Title:       "Path traversal when reading [[.Entity]] files",
		Description: "[[.File]] reads [[.Entity]] files below a base directory: read_[[.Entity]](base_dir, name), where name comes from the request and may contain sub-folders. A security report says callers can read files outside base_dir. Repair read_[[.Entity]] so nothing outside base_dir can be read, keeping nested names working.",
		File:        "[[.Entity]]_files.py",
		API:         []string{"read_[[.Entity]](base_dir, name)"}},
	{Key: "deserialize", CWE: "CWE-502", Severity: "critical", Difficulty: "medium",
		Title:       "Unsafe deserialisation of client-held [[.Entity]] state",
		Description: "[[.File]] round-trips [[.Entity]] state (dicts of JSON-compatible values) through the client: dump_[[.Entity]](data) and load_[[.Entity]](text), which returns None for malformed input. A security report says a crafted value executes code on the server inside load_[[.Entity]]. Make loading safe; values produced by dump_[[.Entity]] must keep loading.",
		File:        "[[.Entity]]_state.py",
		API:         []string{"dump_[[.Entity]](data)", "load_[[.Entity]](text)"}},
	{Key: "compare", CWE: "CWE-208", Severity: "medium", Difficulty: "easy",
		Title:       "Timing leak in [[.Entity]] link signature check",
		Description: "[[.File]] signs [[.Entity]] links: sign_[[.Entity]](key, payload) and verify_[[.Entity]](key, payload, signature). A security review says verify_[[.Entity]] leaks through its running time how much of a forged signature is correct. Fix it without changing which signatures are accepted.",
		File:        "[[.Entity]]_links.py",
		API:         []string{"sign_[[.Entity]](key, payload)", "verify_[[.Entity]](key, payload, signature)"}},
	{Key: "random", CWE: "CWE-330", Severity: "high", Difficulty: "easy",
		Title:       "Predictable [[.Entity]] sharing tokens",
		Description: "[[.File]] creates tokens for [[.Entity]] sharing links: new_[[.Entity]]_token(length=32) returns letters and digits. A security report says the tokens can be predicted by an attacker who observes some of them. Fix token generation without changing the format.",
		File:        "[[.Entity]]_tokens.py",
		API:         []string{"new_[[.Entity]]_token(length=32)"}},
	{Key: "shell", CWE: "CWE-78", Severity: "critical", Difficulty: "medium",
		Title:       "Command injection in the [[.Entity]] word counter",
		Description: "[[.File]] counts the words of uploaded [[.Entity]] files with wc: [[.Entity]]_word_count(path), where the file name is chosen by the uploader. A security report says an attacker can run shell commands through the file name. Fix it so that no shell is involved and counts stay the same for every file name.",
		File:        "[[.Entity]]_stats.py",
		API:         []string{"[[.Entity]]_word_count(path)"}},
	{Key: "html", CWE: "CWE-79", Severity: "high", Difficulty: "easy",
		Title:       "Cross-site scripting in [[.Entity]] cards",
		Description: "[[.File]] renders [[.Entity]] cards as HTML: render_[[.Entity]]_card(item) with a user-supplied title and note. A security report says users can inject script through these fields. Fix the rendering so user data can never create markup, keeping the card's structure.",
		File:        "[[.Entity]]_cards.py",
		API:         []string{"render_[[.Entity]]_card(item)"}},
	{Key: "redirect", CWE: "CWE-601", Severity: "medium", Difficulty: "medium",
		Title:       "Open redirect after saving a [[.Entity]]",
		Description: "[[.File]] computes where to send the user after saving a [[.Entity]]: [[.Entity]]_redirect_target(next_url). Only same-site paths and https URLs on [[.Host]] are legitimate targets. A security report says attackers use next_url to send users to arbitrary sites. Fix it; anything not legitimate must become \"/\".",
		File:        "[[.Entity]]_redirects.py",
		API:         []string{"[[.Entity]]_redirect_target(next_url)"}},
	{Key: "regex", CWE: "CWE-1333", Severity: "medium", Difficulty: "medium",
		Title:       "ReDoS in [[.Entity]] slug validation",
		Description: "[[.File]] validates URL slugs: is_valid_[[.Entity]]_slug(s) accepts lower-case words of letters and digits joined by single dashes. A security report says a crafted slug makes validation take minutes. Make validation run in linear time while accepting exactly the same slugs.",
		File:        "[[.Entity]]_slugs.py",
		API:         []string{"is_valid_[[.Entity]]_slug(s)"}},
	{Key: "gorand", Language: taskset.Go, CWE: "CWE-338", Severity: "high", Difficulty: "easy",
		Title:       "Weak PRNG for [[.Entity]] share tokens",
		Description: "[[.File]] (package [[.Entity]]) creates tokens for [[.Entity]] sharing links: NewToken(n) returns n characters of Alphabet. A security report says tokens can be predicted by an attacker who knows roughly when the service started. Fix token generation without changing the format.",
		File:        "tokens.go",
		API:         []string{"func NewToken(n int) string"}},
	{Key: "goxss", Language: taskset.Go, CWE: "CWE-79", Severity: "high", Difficulty: "easy",
		Title:       "Cross-site scripting in Go [[.Entity]] cards",
		Description: "[[.File]] (package [[.Entity]]) renders user-submitted [[.Entity]] cards: RenderCard(w, item) writes the title and a link. A security report says users can inject script through the title or link. Fix the rendering so user data can never create markup or script URLs, keeping the card's structure.",
		File:        "cards.go",
		API:         []string{"func RenderCard(w io.Writer, it Item) error"}},
}

var (
	entities = []string{"book", "ticket", "invoice", "note", "order", "device", "report", "coupon", "album", "recipe", "playlist", "badge"}
	fields   = []string{"title", "label", "summary", "caption"}
	hosts    = []string{"app.example.com", "shop.example.org", "portal.example.net", "docs.example.io"}
)

type params struct {
	Entity, Table, Field, Host, Module, File, Title string
	Seed                                            int
}

// Generate returns n tasks, cycling through Mutations so that every kind is
// represented once n >= len(Mutations). The same seed always yields the same
// tasks; task ids are unique within one call.
func Generate(seed uint64, n int) ([]taskset.Task, error) {
	if n < 0 || n > 10000 {
		return nil, fmt.Errorf("mutate: n = %d, want 0..10000", n)
	}
	rng := rand.New(rand.NewPCG(seed, 0xE3))
	out := make([]taskset.Task, 0, n)
	ids := map[string]bool{}
	for i := 0; i < n; i++ {
		m := Mutations[i%len(Mutations)]
		var t taskset.Task
		for attempt := 0; ; attempt++ {
			p := params{
				Entity: entities[rng.IntN(len(entities))],
				Field:  fields[rng.IntN(len(fields))],
				Host:   hosts[rng.IntN(len(hosts))],
				Seed:   1 + rng.IntN(1_000_000),
			}
			suffix := fmt.Sprintf("%06x", rng.Uint32()&0xffffff)
			var err error
			t, err = instantiate(m, p, suffix)
			if err != nil {
				return nil, err
			}
			if !ids[t.ID] {
				break
			}
			if attempt > 100 {
				return nil, errors.New("mutate: could not find a unique task id")
			}
		}
		ids[t.ID] = true
		out = append(out, t)
	}
	return out, nil
}

// instantiate builds the task for mutation m with names p; suffix makes the id unique.
func instantiate(m Mutation, p params, suffix string) (taskset.Task, error) {
	p.Table = p.Entity + "s"
	p.Title = strings.ToUpper(p.Entity[:1]) + p.Entity[1:]
	lang := m.Language
	if lang == "" {
		lang = taskset.Python
	}
	names := map[string][4]string{
		taskset.Python: {"clean.py", "test_behaviour.py", "test_security.py", "py"},
		// .tmpl: the templates must not look like Go files to the go tool or gofmt.
		taskset.Go: {"clean.go.tmpl", "behaviour_test.go.tmpl", "security_test.go.tmpl", "go"},
	}[lang]
	render := func(name, text string) (string, error) {
		tmpl, err := template.New(name).Delims("[[", "]]").Option("missingkey=error").Parse(text)
		if err != nil {
			return "", fmt.Errorf("mutate: template %s: %w", name, err)
		}
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, p); err != nil {
			return "", fmt.Errorf("mutate: template %s: %w", name, err)
		}
		return buf.String(), nil
	}
	file, err := render("file", m.File)
	if err != nil {
		return taskset.Task{}, err
	}
	p.File = file
	p.Module = strings.TrimSuffix(file, ".py")
	read := func(file string) (string, error) {
		b, err := templateFS.ReadFile(path.Join("templates", m.Key, file))
		if err != nil {
			return "", fmt.Errorf("mutate: %s: %w", m.Key, err)
		}
		return render(m.Key+"/"+file, string(b))
	}
	clean, err := read(names[0])
	if err != nil {
		return taskset.Task{}, err
	}
	spec, err := read("mutation.txt")
	if err != nil {
		return taskset.Task{}, err
	}
	vulnerable, err := Apply(clean, spec)
	if err != nil {
		return taskset.Task{}, fmt.Errorf("mutate: %s: %w", m.Key, err)
	}
	visible, err := read(names[1])
	if err != nil {
		return taskset.Task{}, err
	}
	hidden, err := read(names[2])
	if err != nil {
		return taskset.Task{}, err
	}
	title, err := render("title", m.Title)
	if err != nil {
		return taskset.Task{}, err
	}
	desc, err := render("description", m.Description)
	if err != nil {
		return taskset.Task{}, err
	}
	var api []string
	for _, a := range m.API {
		s, err := render("api", a)
		if err != nil {
			return taskset.Task{}, err
		}
		api = append(api, s)
	}
	cweNum := strings.TrimPrefix(m.CWE, "CWE-")
	if len(cweNum) < 3 {
		cweNum = strings.Repeat("0", 3-len(cweNum)) + cweNum
	}
	t := taskset.Task{
		ID:          fmt.Sprintf("%s-%s-gen-%s-%s", names[3], cweNum, m.Key, suffix),
		Title:       title,
		Language:    lang,
		CWE:         m.CWE,
		Severity:    m.Severity,
		Description: desc,
		Files:       []string{p.File},
		API:         api,
		Difficulty:  m.Difficulty,
		Source:      fmt.Sprintf("mutate:%s entity=%s field=%s host=%s seed=%d", m.Key, p.Entity, p.Field, p.Host, p.Seed),
		Src:         map[string][]byte{p.File: []byte(vulnerable)},
		Fix:         map[string][]byte{p.File: []byte(clean)},
		Visible:     map[string][]byte{strings.TrimSuffix(names[1], ".tmpl"): []byte(visible)},
		Hidden:      map[string][]byte{strings.TrimSuffix(names[2], ".tmpl"): []byte(hidden)},
	}
	// Near misses (templates/<key>/nearmiss/<variant>.py or .go.tmpl):
	// plausible partial fixes of the same names, kept with the task so the
	// hidden tests are tested on every instance generated.
	ents, err := templateFS.ReadDir(path.Join("templates", m.Key, "nearmiss"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return taskset.Task{}, fmt.Errorf("mutate: %s: %w", m.Key, err)
	}
	for _, e := range ents {
		variant, _, _ := strings.Cut(e.Name(), ".")
		body, err := read(path.Join("nearmiss", e.Name()))
		if err != nil {
			return taskset.Task{}, err
		}
		if t.NearMiss == nil {
			t.NearMiss = map[string]map[string][]byte{}
		}
		t.NearMiss[variant] = map[string][]byte{p.File: []byte(body)}
	}
	if err := taskset.Validate(&t); err != nil {
		return taskset.Task{}, fmt.Errorf("mutate: generated an invalid task: %w", err)
	}
	return t, nil
}

// Apply performs a mutation spec on src. A spec is a sequence of blocks
//
//	<<<
//	exact text to find
//	===
//	replacement
//	>>>
//
// and each "find" text must occur exactly once, so a template edit that
// silently stops matching fails loudly instead of generating a clean "vulnerable" file.
func Apply(src, spec string) (string, error) {
	out := src
	lines := strings.SplitAfter(spec, "\n")
	n := 0
	for i := 0; i < len(lines); {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		if strings.TrimRight(lines[i], "\n") != "<<<" {
			return "", fmt.Errorf("mutation spec line %d: want <<<, got %q", i+1, strings.TrimRight(lines[i], "\n"))
		}
		start := i + 1
		mid := slices.IndexFunc(lines[start:], func(l string) bool { return strings.TrimRight(l, "\n") == "===" })
		if mid < 0 {
			return "", fmt.Errorf("mutation spec line %d: block without ===", i+1)
		}
		mid += start
		end := slices.IndexFunc(lines[mid+1:], func(l string) bool { return strings.TrimRight(l, "\n") == ">>>" })
		if end < 0 {
			return "", fmt.Errorf("mutation spec line %d: block without >>>", mid+1)
		}
		end += mid + 1
		find := strings.TrimSuffix(strings.Join(lines[start:mid], ""), "\n")
		repl := strings.TrimSuffix(strings.Join(lines[mid+1:end], ""), "\n")
		if c := strings.Count(out, find); c != 1 {
			return "", fmt.Errorf("mutation spec line %d: text to replace occurs %d times, want exactly once: %q", start+1, c, find)
		}
		out = strings.Replace(out, find, repl, 1)
		n++
		i = end + 1
	}
	if n == 0 {
		return "", errors.New("mutation spec has no blocks")
	}
	if out == src {
		return "", errors.New("mutation left the source unchanged")
	}
	return out, nil
}

// WriteDir writes tasks under root in the task format (one directory each);
// root is created if needed, existing task directories are never overwritten.
func WriteDir(root string, tasks []taskset.Task) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("mutate: %w", err)
	}
	for _, t := range tasks {
		if err := taskset.Write(root, t); err != nil {
			return fmt.Errorf("mutate: %w", err)
		}
	}
	return nil
}

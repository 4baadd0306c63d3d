package codevuln

import (
	"bytes"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

func miniTask() *taskset.Task {
	return &taskset.Task{
		ID: "py-089-mini", Language: taskset.Python, CWE: "CWE-89", Files: []string{"app.py", "util.py"},
		API: []string{"find(conn, name)"},
		Src: map[string][]byte{
			"app.py":  []byte("import util\n\n\ndef find(conn, name):\n    q = \"SELECT * FROM t WHERE n = '%s'\" % name\n    return conn.execute(q).fetchall()\n"),
			"util.py": []byte("def norm(s):\n    return s.strip()\n"),
			"data.py": []byte("X = 1\n"),
		},
	}
}

func TestParseAnswerForms(t *testing.T) {
	task := miniTask()
	fixed := strings.Replace(string(task.Src["app.py"]), "q = \"SELECT * FROM t WHERE n = '%s'\" % name\n    return conn.execute(q).fetchall()", "return conn.execute(\"SELECT * FROM t WHERE n = ?\", (name,)).fetchall()", 1)
	diff := UnifiedDiff("app.py", string(task.Src["app.py"]), fixed) + "\n"
	gitDiff := "diff --git a/app.py b/app.py\n" + strings.Replace(strings.Replace(diff, "--- app.py", "--- a/app.py", 1), "+++ app.py", "+++ b/app.py", 1)
	jsonDiff := answerMsg(diff, true, "placeholders").Content
	for _, c := range []struct {
		name, text, form, reject string
		changed                  bool
	}{
		{"json diff", jsonDiff, FormJSON, "", true},
		{"json patched_code with file", `{"diff":"","tests_passed":true,"explanation":"x","patched_code":` + quote(fixed) + `,"file":"app.py"}`, FormJSON, "", true},
		{"json patched_code, two editable files, no file", `{"diff":"","tests_passed":true,"explanation":"x","patched_code":` + quote(fixed) + `}`, FormJSON, "needs a \"file\" field", false},
		{"fenced json", "Here:\n```json\n" + jsonDiff + "\n```\n", FormJSON, "", true},
		{"fenced diff", "```diff\n" + diff + "```\n", FormDiff, "", true},
		{"bare git diff", gitDiff, FormDiff, "", true},
		{"empty json diff is a no-op", `{"diff":"","tests_passed":false,"explanation":""}`, FormJSON, "", false},
		{"prose", "I would use placeholders.", FormNone, "no JSON answer", false},
		{"diff naming a non-editable file", strings.ReplaceAll(diff, "app.py", "data.py"), FormDiff, "not an editable file", false},
		{"diff with traversal", strings.ReplaceAll(diff, "app.py", "../../etc/passwd"), FormDiff, "not an editable file", false},
		{"diff that does not apply", strings.Replace(diff, "-    return conn", "-    return KONN", 1), FormDiff, "does not apply", false},
		{"whole file named outside the task", `{"diff":"","tests_passed":true,"explanation":"x","patched_code":"x = 1","file":"../evil.py"}`, FormJSON, "not editable", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := ParseAnswer(c.text)
			if a.Form != c.form {
				t.Fatalf("form = %q, want %q (err %q)", a.Form, c.form, a.Err)
			}
			cand := ApplyAnswer(task, a)
			if c.reject == "" && cand.Reject != "" {
				t.Fatalf("rejected: %s", cand.Reject)
			}
			if c.reject != "" && !strings.Contains(cand.Reject, c.reject) {
				t.Fatalf("reject = %q, want it to mention %q", cand.Reject, c.reject)
			}
			if got := len(cand.Changed) > 0; got != c.changed {
				t.Errorf("changed = %v (%v), want %v", got, cand.Changed, c.changed)
			}
			if c.changed && string(cand.Files["app.py"]) != fixed {
				t.Errorf("patched app.py:\n%s", cand.Files["app.py"])
			}
		})
	}
}

func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestAnswerBounds(t *testing.T) {
	task := miniTask()
	huge := strings.Repeat("x", MaxAnswerBytes+1)
	if a := ParseAnswer(huge); a.Form != FormNone || !strings.Contains(a.Err, "limit") {
		t.Errorf("oversized answer: %+v", a.Form)
	}
	big := `{"diff":"","tests_passed":true,"explanation":"x","file":"app.py","patched_code":"` + strings.Repeat("y", MaxFileBytes+10) + `"}`
	if c := ApplyAnswer(task, ParseAnswer(big)); !strings.Contains(c.Reject, "limit") {
		t.Errorf("oversized file accepted: %q", c.Reject)
	}
}

// FuzzParseAnswer feeds hostile text to the parser and the patch
// application: no panic, only editable files change, sizes stay bounded.
func FuzzParseAnswer(f *testing.F) {
	task := miniTask()
	fixed := strings.Replace(string(task.Src["app.py"]), "'%s'\" % name", "?\"", 1)
	diff := UnifiedDiff("app.py", string(task.Src["app.py"]), fixed) + "\n"
	for _, s := range []string{
		answerMsg(diff, true, "x").Content, "```diff\n" + diff + "```", diff, "```python\nx = 1\n```",
		`{"diff": 5, "tests_passed": "false"}`, `{"patched_code": "a", "file": "util.py"}`, "{", "```json\n{}\n```",
		"diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-import util\n+import os\n",
		"--- app.py\n+++ app.py\n@@ -1,0 +1,1 @@\n+x\n--- util.py\n+++ util.py\n@@ -1 +1 @@\n-def norm(s):\n+def norm(t):\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a := ParseAnswer(text)
		c := ApplyAnswer(task, a)
		if c.Reject != "" {
			return
		}
		for name, b := range c.Files {
			if len(b) > MaxFileBytes {
				t.Fatalf("%s grew to %d bytes", name, len(b))
			}
			if _, ok := task.Src[name]; !ok {
				t.Fatalf("answer created file %q", name)
			}
			if !contains(task.Files, name) && !bytes.Equal(b, task.Src[name]) {
				t.Fatalf("answer changed non-editable %q", name)
			}
		}
	})
}

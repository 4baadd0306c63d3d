package policypack

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	textclip "github.com/svbench/svbench/base/clip"
)

// Bounds on policy.md.
const (
	MinClauses        = 5
	MaxClauses        = 25
	MaxDocumentBytes  = 64 << 10
	MaxClauseIDLen    = 40
	MaxClauseTextLen  = 1000
	maxTitleLen       = 200
	clauseIDPatternRe = `[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+`
)

var (
	clauseIDRe   = regexp.MustCompile(`^` + clauseIDPatternRe + `$`)
	clauseLineRe = regexp.MustCompile(`^(\d+)\.\s+\[([^\]]*)\]\s*(.*)$`)
	// numberedRe catches lines that look like a clause but miss the format,
	// so a typo is reported instead of silently becoming prose.
	numberedRe = regexp.MustCompile(`^\d+\.\s`)
)

// DocClause is one numbered clause of policy.md.
type DocClause struct {
	Number int
	ID     string
	Text   string
	Line   int
}

// Document is a parsed policy.md.
type Document struct {
	Title   string
	Clauses []DocClause
}

// ValidClauseID reports whether s is a well-formed clause id: upper-case
// words joined by hyphens, at least two of them (PAY-DIGEST, S3-PUBLIC-ACL).
func ValidClauseID(s string) bool {
	return len(s) <= MaxClauseIDLen && clauseIDRe.MatchString(s)
}

// ParseDocument parses policy.md. Errors carry the 1-based line and say what
// the line should look like.
func ParseDocument(name, text string) (Document, error) {
	var doc Document
	if len(text) > MaxDocumentBytes {
		return doc, fmt.Errorf("%s: %d bytes exceeds the %d-byte limit for a policy document", name, len(text), MaxDocumentBytes)
	}
	if !utf8.ValidString(text) || strings.IndexByte(text, 0) >= 0 {
		return doc, fmt.Errorf("%s: not UTF-8 text", name)
	}
	seen := map[string]int{}
	var cur *DocClause
	for i, raw := range strings.Split(text, "\n") {
		line := strings.TrimRight(raw, " \t\r")
		ln := i + 1
		trimmed := strings.TrimSpace(line)
		if doc.Title == "" {
			if trimmed == "" {
				continue
			}
			if !strings.HasPrefix(trimmed, "# ") || strings.TrimSpace(trimmed[2:]) == "" {
				return doc, fmt.Errorf("%s:%d: the document must start with a title line \"# <title>\", got %q", name, ln, textclip.Bytes(trimmed, 60, textclip.Ellipsis))
			}
			doc.Title = strings.TrimSpace(trimmed[2:])
			if len(doc.Title) > maxTitleLen {
				return doc, fmt.Errorf("%s:%d: title longer than %d bytes", name, ln, maxTitleLen)
			}
			continue
		}
		if trimmed == "" {
			cur = nil
			continue
		}
		if m := clauseLineRe.FindStringSubmatch(line); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil || n != len(doc.Clauses)+1 {
				return doc, fmt.Errorf("%s:%d: clause numbered %s, expected %d (clauses are numbered 1, 2, 3, … in order)", name, ln, m[1], len(doc.Clauses)+1)
			}
			id := m[2]
			if !ValidClauseID(id) {
				return doc, fmt.Errorf("%s:%d: clause id [%s] is not valid: use upper-case letters and digits in at least two hyphen-joined parts, at most %d characters (e.g. [PAY-DIGEST])", name, ln, textclip.Bytes(id, 60, textclip.Ellipsis), MaxClauseIDLen)
			}
			if prev, dup := seen[id]; dup {
				return doc, fmt.Errorf("%s:%d: duplicate clause id %s (first at line %d)", name, ln, id, prev)
			}
			seen[id] = ln
			if strings.TrimSpace(m[3]) == "" {
				return doc, fmt.Errorf("%s:%d: clause %s has no text", name, ln, id)
			}
			doc.Clauses = append(doc.Clauses, DocClause{Number: n, ID: id, Text: strings.TrimSpace(m[3]), Line: ln})
			cur = &doc.Clauses[len(doc.Clauses)-1]
			if len(doc.Clauses) > MaxClauses {
				return doc, fmt.Errorf("%s:%d: more than %d clauses", name, ln, MaxClauses)
			}
			continue
		}
		if numberedRe.MatchString(trimmed) && line == trimmed {
			return doc, fmt.Errorf("%s:%d: numbered line %q is not a clause; write \"N. [CLAUSE-ID] text\"", name, ln, textclip.Bytes(trimmed, 60, textclip.Ellipsis))
		}
		if cur != nil && line != trimmed {
			cur.Text += " " + trimmed
		} else {
			cur = nil
		}
	}
	if doc.Title == "" {
		return doc, fmt.Errorf("%s: empty document; it needs a \"# <title>\" line and %d–%d clauses", name, MinClauses, MaxClauses)
	}
	if len(doc.Clauses) < MinClauses {
		return doc, fmt.Errorf("%s: %d clauses; a policy needs %d–%d numbered clauses \"N. [CLAUSE-ID] text\"", name, len(doc.Clauses), MinClauses, MaxClauses)
	}
	for _, c := range doc.Clauses {
		if len(c.Text) > MaxClauseTextLen {
			return doc, fmt.Errorf("%s:%d: clause %s is %d bytes, over the %d-byte limit", name, c.Line, c.ID, len(c.Text), MaxClauseTextLen)
		}
	}
	return doc, nil
}

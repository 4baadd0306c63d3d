// Package yamlsafe guards YAML parsing against hostile input before any
// verifier sees it: it bounds the bytes, the number of documents, the
// nesting depth and — the point of the package — the size of the tree after
// alias expansion, so a "billion laughs" document is rejected in time linear
// in its text instead of being expanded by a downstream decoder.
//
// Documents are split exactly as Kubernetes tooling (and kube-linter) split
// them: a line that starts with "---" followed by nothing but spaces or a
// comment ends a document. Each Document keeps its raw bytes, the 1-based
// line where its content starts, and the parsed yaml.v3 node tree.
package yamlsafe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/verify/nesting"
)

// Default limits. A Kubernetes manifest from a dataset is a few KiB; 2 MiB
// leaves room for large CRDs while keeping a model's output bounded.
const (
	DefaultMaxBytes     = 2 << 20
	DefaultMaxDocuments = 200
	DefaultMaxNodes     = 200_000 // nodes after alias expansion, per file
	DefaultMaxAliases   = 1_000
	// DefaultMaxDepth is svbench's one nesting bound, applied to the text
	// before it is parsed (nesting.YAML) and to the parsed tree.
	DefaultMaxDepth = nesting.DefaultMax
)

// Limits bound one file. Zero fields take the defaults.
type Limits struct {
	MaxBytes     int
	MaxDocuments int
	MaxNodes     int
	MaxAliases   int
	MaxDepth     int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDocuments <= 0 {
		l.MaxDocuments = DefaultMaxDocuments
	}
	if l.MaxNodes <= 0 {
		l.MaxNodes = DefaultMaxNodes
	}
	if l.MaxAliases <= 0 {
		l.MaxAliases = DefaultMaxAliases
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// Error is a rejected or unparsable file. Line is 1-based, 0 when unknown.
type Error struct {
	File string
	Line int
	Msg  string
	// Limit is true when the input was well-formed enough to parse but
	// exceeded a bound (size, documents, aliases, depth).
	Limit bool
	// Err is the underlying cause when there is one worth matching: a
	// *nesting.Error for a text or tree nested deeper than MaxDepth.
	Err error
}

func (e *Error) Error() string {
	loc := e.File
	if loc == "" {
		loc = "<input>"
	}
	if e.Line > 0 {
		loc += ":" + strconv.Itoa(e.Line)
	}
	return loc + ": " + e.Msg
}

// ErrLimit is matched by errors.Is for every limit violation.
var ErrLimit = errors.New("yamlsafe: limit exceeded")

// Is lets errors.Is(err, ErrLimit) tell bounds from syntax errors.
func (e *Error) Is(target error) bool { return target == ErrLimit && e.Limit }

// Unwrap exposes Err, so errors.Is(err, nesting.ErrTooDeep) finds a file
// refused for its depth.
func (e *Error) Unwrap() error { return e.Err }

// depthError is the refusal of a text or tree deeper than max levels.
func depthError(file string, line, max int) *Error {
	ne := &nesting.Error{File: file, Line: line, Limit: max}
	return &Error{File: file, Line: line, Limit: true, Msg: fmt.Sprintf("nested deeper than %d levels (the nesting bound)", max), Err: ne}
}

// Document is one YAML document of a file.
type Document struct {
	Index int    // 0-based position among the non-empty documents of the file
	Line  int    // 1-based line of the document's first content line
	Raw   []byte // the document's text, without the separator line
	// Node is the parsed document's root content node (a mapping for a
	// Kubernetes object); nil for a document that holds only comments.
	Node *yaml.Node
}

// Empty reports whether the document holds no value (only comments or
// whitespace, or an explicit null).
func (d Document) Empty() bool {
	return d.Node == nil || (d.Node.Kind == yaml.ScalarNode && d.Node.Tag == "!!null")
}

// Split checks data against the limits, splits it into documents and parses
// each one. Documents that are blank are dropped; documents that hold only
// comments are kept with a nil Node so indices stay meaningful to callers
// that address documents by position.
func Split(file string, data []byte, lim Limits) ([]Document, error) {
	lim = lim.withDefaults()
	if len(data) > lim.MaxBytes {
		return nil, &Error{File: file, Limit: true, Msg: fmt.Sprintf("%d bytes exceeds the %d-byte limit for a YAML file; split it or raise the limit", len(data), lim.MaxBytes)}
	}
	if !utf8.Valid(data) {
		return nil, &Error{File: file, Msg: "not UTF-8 text (binary data?); YAML files must be UTF-8"}
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, &Error{File: file, Msg: "contains NUL bytes (binary data?); expected YAML text"}
	}
	// yaml.v3 bounds its own recursion (10,000 levels); measuring first
	// refuses a deep text by its line without parsing it at all.
	var ne *nesting.Error
	if err := nesting.YAML(file, data, lim.MaxDepth); errors.As(err, &ne) {
		return nil, depthError(file, ne.Line, lim.MaxDepth)
	}
	var docs []Document
	budget := guardBudget{nodes: lim.MaxNodes, aliases: lim.MaxAliases, maxDepth: lim.MaxDepth}
	for _, chunk := range splitDocuments(data) {
		if len(bytes.TrimSpace(chunk.raw)) == 0 {
			continue
		}
		if len(docs) >= lim.MaxDocuments {
			return nil, &Error{File: file, Line: chunk.line, Limit: true, Msg: fmt.Sprintf("more than %d YAML documents in one file", lim.MaxDocuments)}
		}
		node, err := parseOne(chunk.raw)
		if err != nil {
			return nil, &Error{File: file, Line: chunk.line + yamlErrLine(err) - 1, Msg: "invalid YAML: " + yamlErrMsg(err)}
		}
		doc := Document{Index: len(docs), Line: chunk.line, Raw: chunk.raw, Node: node}
		if node != nil {
			doc.Line = chunk.line + node.Line - 1
			if err := budget.check(node, 0); err != nil {
				err.File = file
				if err.Line == 0 {
					err.Line = doc.Line
				} else {
					err.Line += chunk.line - 1
				}
				if ne, ok := err.Err.(*nesting.Error); ok {
					ne.File, ne.Line = err.File, err.Line
				}
				return nil, err
			}
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

type chunk struct {
	raw  []byte
	line int // 1-based line of the chunk's first byte
}

// splitDocuments mirrors k8s.io/apimachinery/pkg/util/yaml.YAMLReader: a
// line beginning with "---" whose remainder is blank or a comment separates
// documents.
func splitDocuments(data []byte) []chunk {
	var out []chunk
	start, startLine, line := 0, 1, 1
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		l := data[i:next]
		if bytes.HasPrefix(l, []byte("---")) {
			rest := strings.TrimSpace(string(l[3:]))
			if rest == "" || rest[0] == '#' {
				out = append(out, chunk{raw: data[start:i], line: startLine})
				start, startLine = next, line+1
			}
		}
		i = next
		line++
	}
	out = append(out, chunk{raw: data[start:], line: startLine})
	return out
}

// parseOne parses a single document. A chunk that yaml.v3 sees as several
// documents (a "---" with content after it on the same line, or "...")
// is rejected: Kubernetes tools would not split it that way either.
func parseOne(raw []byte) (n *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			n, err = nil, fmt.Errorf("parser failure: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("line %d: a second document starts inside this one; separate documents with a line holding only ---", extra.Line)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// guardBudget counts nodes as if aliases were expanded. Each anchored node's
// expanded size is memoised, so the check is linear in the text while the
// count it computes is the size a naive decoder would build.
type guardBudget struct {
	nodes, aliases, maxDepth int
	memo                     map[*yaml.Node]int
}

func (g *guardBudget) check(root *yaml.Node, _ int) *Error {
	if g.memo == nil {
		g.memo = map[*yaml.Node]int{}
	}
	aliases := 0
	var size func(n *yaml.Node, depth int) (int, *Error)
	size = func(n *yaml.Node, depth int) (int, *Error) {
		if depth > g.maxDepth {
			return 0, depthError("", n.Line, g.maxDepth)
		}
		if n.Kind == yaml.AliasNode {
			aliases++
			if aliases > g.aliases {
				return 0, &Error{Line: n.Line, Limit: true, Msg: fmt.Sprintf("more than %d YAML aliases (possible alias bomb); expand anchors by hand", g.aliases)}
			}
			if n.Alias == nil {
				return 1, nil
			}
			if s, ok := g.memo[n.Alias]; ok {
				return s, nil
			}
			return 0, &Error{Line: n.Line, Msg: "alias refers to an anchor that encloses it"}
		}
		total := 1
		for _, c := range n.Content {
			s, err := size(c, depth+1)
			if err != nil {
				return 0, err
			}
			total += s
			if total > g.nodes {
				return 0, &Error{Line: n.Line, Limit: true, Msg: fmt.Sprintf("more than %d YAML nodes after alias expansion (possible alias bomb)", g.nodes)}
			}
		}
		if n.Anchor != "" {
			g.memo[n] = total
		}
		return total, nil
	}
	s, err := size(root, 0)
	if err != nil {
		return err
	}
	g.nodes -= s
	if g.nodes < 0 {
		return &Error{Line: root.Line, Limit: true, Msg: "too many YAML nodes in this file after alias expansion"}
	}
	g.aliases -= aliases
	return nil
}

// yaml.v3 errors read "yaml: line N: msg"; the line is relative to the
// chunk parsed.
func yamlErrLine(err error) int {
	s := err.Error()
	if i := strings.Index(s, "line "); i >= 0 {
		rest := s[i+5:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if n, e := strconv.Atoi(rest[:j]); e == nil && n > 0 {
			return n
		}
	}
	return 1
}

func yamlErrMsg(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(s, "line ") {
		if i := strings.Index(s, ": "); i >= 0 {
			return s[i+2:]
		}
	}
	return s
}

// Value converts a guarded node into plain JSON-compatible Go values
// (map[string]any, []any, string, json.Number, bool, nil), the form OPA and
// JSON Patch take. Merge keys ("<<") are applied. Non-string mapping keys are
// rendered as their YAML text.
func Value(n *yaml.Node) (any, error) {
	if n == nil {
		return nil, nil
	}
	timestampsAsText(n, 0)
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	return normalize(v), nil
}

// timestampsAsText keeps timestamp-looking scalars as the text the file
// holds: JSON has no time type, and re-encoding 2001-12-14 as
// 2001-12-14T00:00:00Z would change the document a patch round-trips.
func timestampsAsText(n *yaml.Node, depth int) {
	if n == nil || depth > DefaultMaxDepth*2 {
		return
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!timestamp" {
		n.Tag = "!!str"
	}
	for _, c := range n.Content {
		timestampsAsText(c, depth+1)
	}
}

func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalize(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = normalize(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = normalize(e)
		}
		return t
	case int:
		return json.Number(strconv.Itoa(t))
	case int64:
		return json.Number(strconv.FormatInt(t, 10))
	case uint64:
		return json.Number(strconv.FormatUint(t, 10))
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return strconv.FormatFloat(t, 'g', -1, 64)
		}
		return json.Number(strconv.FormatFloat(t, 'g', -1, 64))
	default:
		return t
	}
}

// Parsed is one file split and parsed under some limits, for several
// readers of the same bytes (a patched manifest is read by the structure
// check, kube-linter and OPA). Readers must not modify its nodes.
type Parsed struct {
	file   string
	data   []byte
	limits Limits
	docs   []Document
	err    error
}

// Parse splits and parses data once; see SplitWith.
func Parse(file string, data []byte, lim Limits) *Parsed {
	docs, err := Split(file, data, lim)
	return &Parsed{file: file, data: data, limits: lim.withDefaults(), docs: docs, err: err}
}

// SplitWith is Split, answered from p when p parsed the same file name and
// bytes under the same limits (nil p, or any difference, parses afresh).
func SplitWith(p *Parsed, file string, data []byte, lim Limits) ([]Document, error) {
	if p != nil && p.file == file && p.limits == lim.withDefaults() && bytes.Equal(p.data, data) {
		return p.docs, p.err
	}
	return Split(file, data, lim)
}

package policypack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/svbench/svbench/verify"
)

// Fixture types a pack applies to (pack.json's fixture_type).
const (
	FixtureK8s       = "k8s"
	FixtureTerraform = "terraform"
)

// ClauseType says how a clause relates to what the public scanners check.
type ClauseType string

// Clause types.
const (
	// Requirement: no scanner checks it, so copying scanners misses it.
	Requirement ClauseType = "requirement"
	// Exception: the policy allows something scanners flag in some scope
	// (and forbids it elsewhere), so copying scanners yields false positives.
	Exception ClauseType = "exception"
	// ScannerOverlap: a scanner checks the same thing.
	ScannerOverlap ClauseType = "scanner-overlap"
)

// ClauseTypes lists the types in report order.
var ClauseTypes = []ClauseType{Requirement, Exception, ScannerOverlap}

const maxMetaBytes = 64 << 10

var (
	packIDRe    = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{1,62}$`)
	scannerIDRe = regexp.MustCompile(`^(kube-linter|trivy|opa)/[A-Za-z0-9_.-]{1,80}$`)
)

// meta is pack.json.
type meta struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	FixtureType string `json:"fixture_type"`
	Description string `json:"description,omitempty"`
	// ScopeTags are Terraform tag keys that decide which clauses apply to
	// a resource (env, data-class, …): changing them moves a resource in
	// or out of a clause's scope instead of fixing it.
	ScopeTags []string     `json:"scope_tags,omitempty"`
	Clauses   []metaClause `json:"clauses"`
}

type metaClause struct {
	ID         string     `json:"id"`
	Type       ClauseType `json:"type"`
	Severity   string     `json:"severity"`
	ScannerIDs []string   `json:"scanner_ids,omitempty"`
}

func parseMeta(name string, b []byte) (meta, error) {
	var m meta
	if len(b) > maxMetaBytes {
		return m, fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", name, len(b), maxMetaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return m, fmt.Errorf("%s: %w (expected {\"id\", \"title\", \"fixture_type\", \"clauses\": [{\"id\", \"type\", \"severity\", \"scanner_ids\"}]})", name, err)
	}
	if !packIDRe.MatchString(m.ID) {
		return m, fmt.Errorf("%s: id %q must be 2–63 lower-case letters, digits and hyphens", name, m.ID)
	}
	if strings.TrimSpace(m.Title) == "" {
		return m, fmt.Errorf("%s: title is empty", name)
	}
	switch m.FixtureType {
	case FixtureK8s, FixtureTerraform:
	default:
		return m, fmt.Errorf("%s: fixture_type %q is not supported; use %q or %q", name, m.FixtureType, FixtureK8s, FixtureTerraform)
	}
	if len(m.ScopeTags) > 16 {
		return m, fmt.Errorf("%s: more than 16 scope_tags", name)
	}
	for _, t := range m.ScopeTags {
		if strings.TrimSpace(t) == "" || len(t) > 128 {
			return m, fmt.Errorf("%s: scope_tags holds an empty or over-long tag key", name)
		}
	}
	seen := map[string]bool{}
	for i, c := range m.Clauses {
		at := fmt.Sprintf("%s: clauses[%d]", name, i)
		if !ValidClauseID(c.ID) {
			return m, fmt.Errorf("%s: id %q is not a valid clause id", at, c.ID)
		}
		if seen[c.ID] {
			return m, fmt.Errorf("%s: duplicate clause id %s", at, c.ID)
		}
		seen[c.ID] = true
		switch c.Type {
		case Requirement:
		case Exception, ScannerOverlap:
			if len(c.ScannerIDs) == 0 {
				return m, fmt.Errorf("%s (%s): type %q needs the scanner ids it %s in scanner_ids", at, c.ID, c.Type, map[ClauseType]string{Exception: "makes acceptable", ScannerOverlap: "overlaps"}[c.Type])
			}
		default:
			return m, fmt.Errorf("%s (%s): type %q is not one of requirement, exception, scanner-overlap", at, c.ID, c.Type)
		}
		switch c.Severity {
		case "low", "med", "high":
		default:
			return m, fmt.Errorf("%s (%s): severity %q must be low, med or high", at, c.ID, c.Severity)
		}
		for _, s := range c.ScannerIDs {
			if !scannerIDRe.MatchString(s) {
				return m, fmt.Errorf("%s (%s): scanner id %q must look like kube-linter/<check>, trivy/<AVD id> or opa/<rule id>", at, c.ID, s)
			}
		}
	}
	return m, nil
}

// severity converts a validated pack.json severity.
func (c metaClause) severity() verify.Severity { return verify.Severity(c.Severity) }

// Package verify holds the executable checks shared by svbench environments:
// Kubernetes linting (kubelint), Terraform scanning (tfscan), OPA/Rego policies
// (policy) and patch application (patch). Every verifier runs in-process and
// treats its input as hostile: sizes are bounded, nesting is measured
// against one bound before any recursive parser runs (verify/nesting),
// panics are turned into errors, and findings are plain values safe to
// compare and serialise.
package verify

import (
	"context"
	"sort"
	"strings"

	"github.com/svbench/svbench/verify/yamlsafe"
)

// Severity is the three-level scale the rubrics weight: low, med, high.
type Severity string

// The severities used by rubrics (weights 0.3, 0.6, 1.0 in the reference).
const (
	SeverityLow  Severity = "low"
	SeverityMed  Severity = "med"
	SeverityHigh Severity = "high"
)

// NormalizeSeverity maps a tool's severity label onto low/med/high.
//
// kube-linter Info/Warning/Error, semgrep INFO/WARNING/ERROR and OPA/trivy
// low/medium/high/critical are recognised case-insensitively; critical folds
// into high and anything unknown or empty becomes med, as in the reference.
func NormalizeSeverity(s string) Severity {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low", "info", "informational", "note", "negligible":
		return SeverityLow
	case "high", "error", "critical", "crit":
		return SeverityHigh
	default: // "med", "medium", "warning", "warn", "", unknown
		return SeverityMed
	}
}

// Weight is the reference's rubric weight for a severity (low 0.3, med 0.6,
// high 1.0); unknown severities weigh as med.
func (s Severity) Weight() float64 {
	switch s {
	case SeverityLow:
		return 0.3
	case SeverityHigh:
		return 1.0
	default:
		return 0.6
	}
}

// Object identifies the Kubernetes object a finding is about.
type Object struct {
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// Finding is one rule violation reported by a verifier.
type Finding struct {
	Tool        string   `json:"tool"`
	RuleID      string   `json:"rule_id"`
	Severity    Severity `json:"severity"`
	RawSeverity string   `json:"raw_severity,omitempty"`
	Message     string   `json:"message"`
	Object      Object   `json:"object,omitempty"`
	File        string   `json:"file,omitempty"`
	Line        int      `json:"line,omitempty"`
	// Resource is the Terraform resource address (e.g. aws_s3_bucket.logs).
	Resource string `json:"resource,omitempty"`
	// Remediation is the tool's advice for fixing the finding, when it has one.
	Remediation string `json:"remediation,omitempty"`
}

// ID is the tool-qualified rule id rubrics compare, e.g.
// "kube-linter/run-as-non-root", "trivy/AVD-AWS-0086", "opa/K8S_DOCKER_SOCK".
func (f Finding) ID() string { return f.Tool + "/" + f.RuleID }

// File is one configuration file held in memory.
type File struct {
	Path    string
	Content []byte
	// YAML, when set, is Content already split and parsed; verifiers that
	// read YAML under the same limits use it instead of parsing again.
	YAML *yamlsafe.Parsed
}

// Verifier checks a set of files that form one lint context (cross-object
// checks such as kube-linter's dangling-service see the whole set).
// Implementations are safe for concurrent use.
type Verifier interface {
	Name() string
	Version() string
	Verify(ctx context.Context, files []File) ([]Finding, error)
}

// SortFindings orders findings by file, line, rule, resource and message, so
// every verifier's output is deterministic and diffs of it are stable.
func SortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.RuleID != b.RuleID {
			return a.RuleID < b.RuleID
		}
		if a.Resource != b.Resource {
			return a.Resource < b.Resource
		}
		return a.Message < b.Message
	})
}

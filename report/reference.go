package report

import (
	"time"

	"github.com/svbench/svbench/artifact"
)

// Opt returns &v when the value is defined and nil otherwise. svbench's own
// metrics blocks hold undefined values (a rate over an empty set, such as
// precision with nothing predicted) as nil, which summary.json writes as
// null and Markdown as n/a, instead of a 0 that reads as a score.
func Opt(v float64, defined bool) *float64 {
	if !defined {
		return nil
	}
	return &v
}

// ReferenceVersion is the version of the reference's metrics specification
// (METRICS_E1.md, METRICS_E2.md) that reference-shaped summaries follow.
const ReferenceVersion = "0.1.0"

// ReferenceSummaryKey is the summary.json key under which a builder puts
// its ReferenceSummary.
const ReferenceSummaryKey = "reference_summary"

// ReferenceSummary is the Python reference's summary.json, field for field
// (its summary.schema.json): the run envelope around an environment's
// reference-shaped metrics block. Builders whose environment the reference
// reports on put one under ReferenceSummaryKey so figures compare directly.
type ReferenceSummary struct {
	Environment string         `json:"environment"` // "sv-env-" + the environment id
	Version     string         `json:"version"`     // ReferenceVersion
	RunID       string         `json:"run_id"`
	Timestamp   string         `json:"timestamp"` // RFC 3339, see NewReferenceSummary
	Model       string         `json:"model"`
	Dataset     string         `json:"dataset"`
	NExamples   int            `json:"n_examples"`
	Metrics     any            `json:"metrics"`
	Metadata    map[string]any `json:"metadata"`
	// SeverityBreakdown is E2's per-severity table; other environments
	// leave it nil.
	SeverityBreakdown any `json:"severity_breakdown,omitempty"`
}

// NewReferenceSummary wraps an environment's reference-shaped metrics block
// (over n examples) in the reference's envelope. Fields the metadata lacks
// read "unknown", as in the reference. The reference stamps the time the
// report was generated; svbench stamps when the run finished (metadata's
// finished time, else the newest row, else the start time, else the Unix
// epoch), so the same artifacts always give the same bytes.
func NewReferenceSummary(environment string, meta *artifact.Metadata, rows []artifact.Result, n int, metrics any) *ReferenceSummary {
	s := &ReferenceSummary{
		Environment: environment, Version: ReferenceVersion,
		RunID: "unknown", Model: "unknown", Dataset: "unknown",
		NExamples: n, Metrics: metrics, Metadata: map[string]any{},
	}
	var stamp time.Time
	for i := range rows {
		if rows[i].Time.After(stamp) {
			stamp = rows[i].Time
		}
	}
	if meta != nil {
		orUnknown := func(dst *string, v string) {
			if v != "" {
				*dst = v
			}
		}
		orUnknown(&s.RunID, meta.RunID)
		orUnknown(&s.Model, meta.Model)
		orUnknown(&s.Dataset, meta.Dataset)
		if meta.Finished != nil && !meta.Finished.IsZero() {
			stamp = *meta.Finished
		} else if stamp.IsZero() {
			stamp = meta.Started
		}
		for k, v := range map[string]string{"git_sha": meta.GitCommit, "env_version": meta.EnvVersion, "svbench_version": meta.SvbenchVersion} {
			if v != "" {
				s.Metadata[k] = v
			}
		}
		s.Metadata["seed"] = meta.Seed
	}
	if stamp.IsZero() {
		stamp = time.Unix(0, 0)
	}
	s.Timestamp = stamp.UTC().Format(time.RFC3339Nano)
	return s
}

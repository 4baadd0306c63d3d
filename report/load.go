package report

import (
	"fmt"
	"io"
	"os"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
)

// LoadResults reads a results file in either format (artifact.DecodeResult)
// under the one policy every reader of run artifacts shares
// (artifact.EachRow): it returns the rows and the 1-based line of each.
func LoadResults(path string) ([]artifact.Result, []int, error) {
	return artifact.LoadResults(path)
}

// LoadOptions bound how DecodeResults reads (artifact.ReadOptions).
type LoadOptions = artifact.ReadOptions

// DecodeResults reads rows from r as LoadResults reads a file; name labels
// errors.
func DecodeResults(r io.Reader, name string, opts LoadOptions) ([]artifact.Result, []int, error) {
	return artifact.DecodeResults(r, name, opts)
}

// LoadForReport reads a results file row by row, keeping of each row only
// what report builders read (Slim): a report of a run is built from a
// fraction of the file's size in memory, not a multiple of it.
func LoadForReport(path string) ([]artifact.Result, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	return artifact.DecodeResultsWith(f, path, artifact.ReadOptions{}, decodeSlim)
}

// decodeSlim decodes a row as reports read it: without its prompt
// (artifact.DecodeResultWithoutPrompt), then Slim.
func decodeSlim(b []byte) (artifact.Result, error) {
	r, err := artifact.DecodeResultWithoutPrompt(b)
	if err == nil {
		Slim(&r)
	}
	return r, err
}

// Slim drops what no report builder reads: the prompt (the bulk of a row,
// repeated on every rollout), the completion's non-assistant turns (tool
// results, simulated users) and tool-call arguments. The assistant turns
// stay (red-team novelty reads their text, the reasoning-only count their
// reasoning), as do every score, parsed field, tool-call count and usage
// figure. The builders' contract: Build reads no Prompt, no non-assistant
// Completion message no ToolCallRecord.Arguments and no more of Reasoning than whether it is blank.
func Slim(r *artifact.Result) {
	r.Prompt = nil
	kept := r.Completion[:0]
	for _, m := range r.Completion {
		if m.Role == env.RoleAssistant {
			m.ToolCalls = nil
			// Only whether there was reasoning is read (reasoningOnly);
			// a thinking model's trace can be most of the row.
			m.Reasoning = clip.Prefix(m.Reasoning, 64)
			kept = append(kept, m)
		}
	}
	r.Completion = append([]env.Message(nil), kept...)
	for i := range r.ToolCalls {
		r.ToolCalls[i].Arguments = ""
	}
}

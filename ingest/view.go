package ingest

import (
	"fmt"
	"strings"

	"github.com/svbench/svbench/env"
)

// RawOutput is the default rule for rebuilding the text a trainer's
// environment scored: the serving stack of a hosted trainer split the
// model's output into reasoning_content and content after the environment
// had scored the whole of it, so each assistant message's text is put back
// together, reasoning first (the order the model wrote it), joined by a
// newline when both are present. reasoning_content is then empty: it is part
// of the content again. The second result says how many messages changed
// ("" when none did).
//
// On the reference's E1 exports the answers are entirely in reasoning_content
// with content null; this rule reproduces every recorded reward and
// component (see the real-run tests in this package).
func RawOutput(msgs []env.Message) ([]env.Message, string) {
	out := make([]env.Message, len(msgs))
	copy(out, msgs)
	moved, joined := 0, 0
	for i := range out {
		m := &out[i]
		if m.Role != env.RoleAssistant || m.Reasoning == "" {
			continue
		}
		if strings.TrimSpace(m.Content) == "" {
			m.Content = m.Reasoning
			moved++
		} else {
			m.Content = m.Reasoning + "\n" + m.Content
			joined++
		}
		m.Reasoning = ""
	}
	var parts []string
	if moved > 0 {
		parts = append(parts, fmt.Sprintf("reasoning_content moved into empty content on %d message(s)", moved))
	}
	if joined > 0 {
		parts = append(parts, fmt.Sprintf("reasoning_content put back in front of content on %d message(s)", joined))
	}
	return out, strings.Join(parts, "; ")
}

// SeenCompletion is the completion as the environment saw it when it
// computed the trainer's recorded reward: the environment's own rule when it
// has one (env.TrainerView), RawOutput otherwise.
func SeenCompletion(e env.Environment, msgs []env.Message) ([]env.Message, string) {
	if v, ok := e.(env.TrainerView); ok {
		return v.TrainerView(msgs)
	}
	return RawOutput(msgs)
}

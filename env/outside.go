package env

// OutsideRollout is the Rollout of a completion produced outside svbench
// (a trainer's rollout, a vLLM batch output, a /v1/score item): each
// assistant message is cut to the answer it commits to (CommitAnswers:
// reasoning is not the answer, as in eval), and turns and tool calls are
// counted from the assistant messages. It is the one way every path that
// scores an outside completion (svbench score, the reward server and its
// trainer protocols) builds it.
func OutsideRollout(completion []Message) *Rollout {
	return countedRollout(CommitAnswers(completion))
}

// RecordedRollout is OutsideRollout without the reasoning rule, for the
// one explicit parity mode: re-scoring a trainer's export to reproduce the
// reward its environment recorded on the text it saw (package ingest).
func RecordedRollout(completion []Message) *Rollout {
	return countedRollout(completion)
}

func countedRollout(completion []Message) *Rollout {
	ro := &Rollout{Completion: completion}
	for _, m := range completion {
		if m.Role != RoleAssistant {
			continue
		}
		ro.Turns++
		for _, c := range m.ToolCalls {
			ro.ToolCalls = append(ro.ToolCalls, ToolCallRecord{Turn: ro.Turns, Name: c.Name, Arguments: c.Arguments})
		}
	}
	return ro
}

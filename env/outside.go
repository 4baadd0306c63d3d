package env

// OutsideRollout is the Rollout of a completion produced outside svbench
// (a trainer's rollout, a vLLM batch output, a /v1/score item): turns and
// tool calls are counted from its assistant messages, the one way every
// path that scores an outside completion (svbench score, the reward
// server, trainer re-scoring) builds it.
func OutsideRollout(completion []Message) *Rollout {
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

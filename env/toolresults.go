package env

// AnsweredToolResults returns the tool messages of a completion that answer
// a tool call an earlier assistant message made, in order: a tool message
// names the call it answers by tool_call_id, and each call is answered at
// most once. A call made without an id (some servers send none) is answered
// by the next tool message without one, in order. Any other tool message —
// one before any call, one naming a call nobody made, a second answer to a
// call — answers nothing, and rewards that read tool results must not read
// it: in a completion produced outside svbench anyone can write a
// role "tool" message.
func AnsweredToolResults(completion []Message) []Message {
	var (
		out       []Message
		pendingID = map[string]int{} // call id → calls with that id not yet answered
		anonymous int                // calls without an id not yet answered
	)
	for _, m := range completion {
		switch m.Role {
		case RoleAssistant:
			for _, c := range m.ToolCalls {
				if c.ID == "" {
					anonymous++
				} else {
					pendingID[c.ID]++
				}
			}
		case RoleTool:
			switch {
			case m.ToolCallID == "" && anonymous > 0:
				anonymous--
			case m.ToolCallID != "" && pendingID[m.ToolCallID] > 0:
				pendingID[m.ToolCallID]--
			default:
				continue
			}
			out = append(out, m)
		}
	}
	return out
}

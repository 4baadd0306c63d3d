package env

import (
	"strings"
)

// Reasoning is not the answer. A thinking model served without a reasoning
// parser, or a trainer that decodes the raw tokens itself, hands svbench one
// text holding both its thinking and its answer. Scoring that text as it is
// pays a policy for hedging inside its thinking (the first JSON object in
// the text wins), so every path that scores a completion applies one rule,
// the one `svbench eval` applies to a served model's reply:
//
//   - reasoning blocks are cut out, in the marker families of the vLLM and
//     SGLang reasoning parsers: <think>…</think> (DeepSeek-R1, Qwen3, GLM,
//     MiniMax; R1 and Step3 may omit the opening tag), <seed:think>…
//     </seed:think> (Seed-OSS), ◁think▷…◁/think▷ (Kimi), [THINK]…[/THINK]
//     (Mistral), <thinking>, <reasoning>, gpt-oss's harmony channels
//     (only the final channel answers) and Granite's "Here's my thought
//     process:" … "Here's my response:";
//   - the committed answer is what follows the last closed block;
//   - a block left open (a generation cut off while thinking) has committed
//     to nothing: the text from its opening marker on is dropped.
//
// Recorded-run parity (re-scoring a trainer's export to reproduce the
// reward it recorded, package ingest) is the one place that deliberately
// scores the text as the trainer's environment saw it.

// reasoningTags are the open/close marker pairs of reasoning blocks.
var reasoningTags = [...][2]string{
	{"<think>", "</think>"},
	{"<seed:think>", "</seed:think>"},
	{"◁think▷", "◁/think▷"},
	{"[THINK]", "[/THINK]"},
	{"<thinking>", "</thinking>"},
	{"<reasoning>", "</reasoning>"},
}

// Harmony (gpt-oss) and Granite markers.
const (
	harmonyChannel = "<|channel|>"
	harmonyFinal   = "<|channel|>final<|message|>"
)

var (
	harmonyStops     = [...]string{"<|return|>", "<|end|>", "<|call|>"}
	graniteThought   = [...]string{"Here's my thought process:", "Here is my thought process:"}
	graniteResponses = [...]string{"Here's my response:", "Here is my response:"}
)

// SplitReasoning separates a completion text into the answer it commits to
// and the reasoning around it (joined, for the record). A text with no
// reasoning marker is all answer.
func SplitReasoning(text string) (answer, reasoning string) {
	var thought []string
	answer = text
	if strings.Contains(answer, harmonyChannel) {
		var r string
		answer, r = splitHarmony(answer)
		thought = append(thought, r)
	} else {
		for _, m := range graniteThought {
			if i := strings.Index(answer, m); i >= 0 {
				var r string
				answer, r = splitGranite(answer, i)
				thought = append(thought, r)
				break
			}
		}
	}
	// Everything up to the last closing marker of any family is reasoning
	// (an opening marker before it may be missing: R1 omits it).
	last, lastLen := -1, 0
	for _, t := range reasoningTags {
		if i := strings.LastIndex(answer, t[1]); i > last {
			last, lastLen = i, len(t[1])
		}
	}
	if last >= 0 {
		thought = append(thought, answer[:last+lastLen])
		answer = answer[last+lastLen:]
	}
	// An opening marker after it starts a block that never closed.
	first := -1
	for _, t := range reasoningTags {
		if i := strings.Index(answer, t[0]); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first >= 0 {
		thought = append(thought, answer[first:])
		answer = answer[:first]
	}
	if len(thought) == 0 {
		return text, ""
	}
	return strings.TrimSpace(answer), strings.Join(thought, "\n")
}

// splitHarmony keeps the last final-channel message; analysis and
// commentary channels are reasoning, and without a final channel nothing
// was committed.
func splitHarmony(text string) (string, string) {
	i := strings.LastIndex(text, harmonyFinal)
	if i < 0 {
		return "", text
	}
	answer := text[i+len(harmonyFinal):]
	for _, stop := range harmonyStops {
		if j := strings.Index(answer, stop); j >= 0 {
			answer = answer[:j]
		}
	}
	return strings.TrimSpace(answer), text[:i]
}

// splitGranite keeps what follows the last response marker after the
// thought-process marker at i; without one nothing was committed.
func splitGranite(text string, i int) (string, string) {
	best, bestLen := -1, 0
	for _, m := range graniteResponses {
		if j := strings.LastIndex(text, m); j > i && j > best {
			best, bestLen = j, len(m)
		}
	}
	if best < 0 {
		return "", text
	}
	return strings.TrimSpace(text[best+bestLen:]), text[:best]
}

// CommitAnswers returns msgs with each assistant message's content cut to
// the answer it commits to (SplitReasoning), the reasoning moved to
// Reasoning after any the message already carried. msgs is not modified;
// messages without reasoning markers are returned unchanged.
func CommitAnswers(msgs []Message) []Message {
	var out []Message
	for i, m := range msgs {
		if m.Role != RoleAssistant {
			continue
		}
		answer, reasoning := SplitReasoning(m.Content)
		if reasoning == "" {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		out[i].Content = answer
		if out[i].Reasoning != "" {
			reasoning = out[i].Reasoning + "\n" + reasoning
		}
		out[i].Reasoning = reasoning
	}
	if out == nil {
		return msgs
	}
	return out
}

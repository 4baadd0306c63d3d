package llm

import (
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/svbench/svbench/base/clip"
)

// MaxReasoningBytes bounds env.Message.Reasoning. Thinking models can emit
// tens of thousands of tokens per turn, and every turn lands in
// results.jsonl; 256 KiB keeps the longest ordinary traces whole. Longer
// text keeps its first MaxReasoningBytes bytes, cut on a rune boundary,
// followed by a marker "\n[… truncated N bytes]".
const MaxReasoningBytes = 256 << 10

// reasoningFields are the message fields servers put a reasoning parser's
// output in, in order of preference: reasoning_content (vLLM and SGLang
// reasoning parsers, DeepSeek, Qwen3) and reasoning (OpenRouter, newer
// Ollama and vLLM, which send both with the same text).
var reasoningFields = [...]string{"reasoning_content", "reasoning"}

// reasoningText is the message's reasoning, bounded. openai-go does not
// know these fields; it keeps them as raw JSON in JSON.ExtraFields. Values
// that are not JSON strings (null, objects) are ignored.
func reasoningText(m openai.ChatCompletionMessage) string {
	for _, name := range reasoningFields {
		f, ok := m.JSON.ExtraFields[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return boundReasoning(s)
		}
	}
	return ""
}

// truncateReasoning applies MaxReasoningBytes.
func boundReasoning(s string) string {
	if len(s) <= MaxReasoningBytes {
		return s
	}
	kept := clip.Prefix(s, MaxReasoningBytes)
	return kept + fmt.Sprintf("\n[… truncated %d bytes]", len(s)-len(kept))
}

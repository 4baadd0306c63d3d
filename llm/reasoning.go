package llm

import (
	"encoding/json"
	"fmt"

	"github.com/svbench/svbench/base/clip"
)

// MaxReasoningBytes bounds env.Message.Reasoning. Thinking models can emit
// tens of thousands of tokens per turn, and every turn lands in
// results.jsonl; 256 KiB keeps the longest ordinary traces whole. Longer
// text keeps its first MaxReasoningBytes bytes, cut on a rune boundary,
// followed by a marker "\n[… truncated N bytes]".
const MaxReasoningBytes = 256 << 10

// reasoningText is the message's reasoning, bounded: the first of the
// fields servers put a reasoning parser's output in, given in order of
// preference (reasoning_content: vLLM and SGLang reasoning parsers,
// DeepSeek, Qwen3; reasoning: OpenRouter, newer Ollama and vLLM, which
// send both with the same text), that is a non-empty JSON string; other
// values (null, objects) are ignored.
func reasoningText(fields ...json.RawMessage) string {
	for _, raw := range fields {
		if s := lenientString(raw); s != "" {
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

package env

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitReasoning(t *testing.T) {
	const ans = `{"label": "Malicious", "confidence": 0.9}`
	for _, c := range []struct {
		name, text, answer string
		reasoned           bool
	}{
		{"plain answer", ans, ans, false},
		{"qwen3 hedging inside its thinking", `<think>maybe {"label": "Benign", "confidence": 0.6}?</think>` + ans, ans, true},
		{"r1 without the opening tag", `so it is benign {"label": "Benign"}</think>` + "\n\n" + ans, ans, true},
		{"unterminated block commits to nothing", `<think>maybe ` + ans, "", true},
		{"answer then a block cut off", ans + `<think>wait, {"label": "Benign"}`, ans, true},
		{"the final answer commits", `{"label": "Benign"}<think>no</think>` + ans, ans, true},
		{"two blocks", `<think>a</think>{"label": "Benign"}<think>b</think>` + ans, ans, true},
		{"seed-oss", `<seed:think>{"label": "Benign"}</seed:think>` + ans, ans, true},
		{"kimi", `◁think▷{"label": "Benign"}◁/think▷` + ans, ans, true},
		{"mistral", `[THINK]{"label": "Benign"}[/THINK]` + ans, ans, true},
		{"mixed families", `<think>x</think>[THINK]{"label": "Benign"}[/THINK]` + ans, ans, true},
		{"harmony final channel", `<|channel|>analysis<|message|>{"label": "Benign"}<|end|><|start|>assistant<|channel|>final<|message|>` + ans + `<|return|>`, ans, true},
		{"harmony without a final channel", `<|channel|>analysis<|message|>` + ans + `<|end|>`, "", true},
		{"granite", "Here's my thought process: " + `{"label": "Benign"}` + "\nHere's my response: " + ans, ans, true},
		{"granite cut off while thinking", "Here is my thought process: " + ans, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			answer, reasoning := SplitReasoning(c.text)
			if answer != c.answer || (reasoning != "") != c.reasoned {
				t.Fatalf("SplitReasoning(%q) = %q, reasoning %q; want %q (reasoning: %v)", c.text, answer, reasoning, c.answer, c.reasoned)
			}
		})
	}
}

func TestCommitAnswers(t *testing.T) {
	in := []Message{
		{Role: RoleUser, Content: "<think>user text is not touched</think>"},
		{Role: RoleAssistant, Content: "<think>a</think>b", Reasoning: "from the parser"},
		{Role: RoleAssistant, Content: "plain"},
	}
	out := CommitAnswers(in)
	if in[1].Content != "<think>a</think>b" {
		t.Fatal("CommitAnswers modified its input")
	}
	if out[0].Content != in[0].Content || out[1].Content != "b" || out[1].Reasoning != "from the parser\n<think>a</think>" || out[2].Content != "plain" {
		t.Fatalf("CommitAnswers = %+v", out)
	}
	if ro := OutsideRollout(in); ro.Completion[1].Content != "b" || ro.Turns != 2 {
		t.Fatalf("OutsideRollout does not apply the rule: %+v", ro)
	}
	if ro := RecordedRollout(in); ro.Completion[1].Content != "<think>a</think>b" {
		t.Fatalf("RecordedRollout (parity) changed the text: %+v", ro)
	}
}

// FuzzSplitReasoning: the answer is always a part of the text, never holds
// a closed block, and the split never panics on hostile text.
func FuzzSplitReasoning(f *testing.F) {
	for _, s := range []string{"", "<think>", "</think>", "<think>a</think>b<think>", "<|channel|>final<|message|>x<|end|>", "Here's my thought process: Here's my response: y", "◁/think▷\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		answer, _ := SplitReasoning(s)
		if !strings.Contains(s, answer) {
			t.Fatalf("answer %q is not part of %q", answer, s)
		}
		for _, tag := range reasoningTags {
			if strings.Contains(answer, tag[1]) {
				t.Fatalf("answer %q still holds %s", answer, tag[1])
			}
		}
		if utf8.ValidString(s) && !utf8.ValidString(answer) {
			t.Fatalf("answer of valid UTF-8 is not: %q", answer)
		}
	})
}

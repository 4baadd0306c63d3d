package cache

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"

	textclip "github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// Why a stored entry was not replayed. Every rejected entry is a miss: the
// model is asked again and its answer overwrites the entry.
const (
	// RejectHash: the entry's content hash does not match its bytes and
	// key (the row was edited, or copied from another request).
	RejectHash = "hash"
	// RejectUndecodable: the bytes are not a stored response document.
	RejectUndecodable = "undecodable"
	// RejectShape: a response document, but not a well-formed assistant
	// answer (no message, negative usage, an over-long model name, …).
	RejectShape = "shape"
	// RejectRole: the message is not the assistant's.
	RejectRole = "role"
	// RejectTool: a tool call names a tool the request did not offer.
	RejectTool = "tool"
	// RejectSize: larger than the request's max_tokens allows, or than
	// the absolute cap on an entry.
	RejectSize = "size"
)

// Bounds of a replayable entry.
const (
	// DefaultMaxEntryBytes caps a stored response whatever the request
	// asked for. 100k tokens of text is well under 1 MiB; the margin is
	// for escaping and reasoning models.
	DefaultMaxEntryBytes = 8 << 20
	// bytesPerToken is the most text one token is allowed to stand for
	// when the request set max_tokens. Real tokenizers average about 4
	// bytes and their longest tokens (runs of spaces or dashes) are a few
	// dozen, so an honest answer never comes near it; a 50 MiB answer to
	// a 1,024-token request does.
	bytesPerToken = 32
	// textSlack absorbs tool call ids and names, which the endpoint adds
	// and the model does not pay tokens for.
	textSlack = 4 << 10
	// maxLabelBytes bounds the short strings of a response (model name,
	// finish reason, tool call id and name).
	maxLabelBytes = 1 << 10
)

// rejectError says why an entry cannot be replayed.
type rejectError struct {
	reason string
	msg    string
}

func (e *rejectError) Error() string { return e.reason + ": " + e.msg }

func reject(reason, format string, args ...any) *rejectError {
	return &rejectError{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// entrySum binds an entry's bytes to its key under the cache's secret: an
// edited value, or a value moved to another request's key, no longer
// matches, and an unkeyed hash recomputed by whoever edited the file does
// not either. Anyone who can read the key file can still forge one, which
// is why every replayed entry is also validated against its request. The
// key is a fixed-length SHA-256, so key‖val splits one way only.
func (c *Cache) entrySum(key, val []byte) []byte {
	h := hmac.New(sha256.New, c.secret)
	h.Write([]byte("svbench response cache v2\x00"))
	h.Write(key)
	h.Write(val)
	return h.Sum(nil)
}

func (c *Cache) sumMatches(want, key, val []byte) bool {
	return hmac.Equal(want, c.entrySum(key, val))
}

// decodeEntry reads a stored value and checks it against the request it is
// about to answer, as if the model had just sent it.
func decodeEntry(req llm.Request, val []byte) (llm.Response, *rejectError) {
	if len(val) == 0 || val[0] != '{' {
		// json.Marshal of stored always starts with '{'; `null` and other
		// non-objects would otherwise decode into a zero answer.
		return llm.Response{}, reject(RejectUndecodable, "not a JSON object")
	}
	var s struct {
		Message      *env.Message `json:"message"`
		Usage        env.Usage    `json:"usage"`
		FinishReason string       `json:"finish_reason"`
		Model        string       `json:"model"`
	}
	if err := json.Unmarshal(val, &s); err != nil {
		return llm.Response{}, reject(RejectUndecodable, "%v", err)
	}
	if s.Message == nil {
		return llm.Response{}, reject(RejectShape, "no message")
	}
	resp := llm.Response{Message: *s.Message, Usage: s.Usage, FinishReason: s.FinishReason, Model: s.Model}
	if err := checkResponse(req, resp); err != nil {
		return llm.Response{}, err
	}
	resp.Cached = true
	return resp, nil
}

// checkResponse holds a response to what the request could have produced.
// Fresh answers go through it too: one that could not be replayed is not
// stored.
func checkResponse(req llm.Request, resp llm.Response) *rejectError {
	m := resp.Message
	if m.Role != env.RoleAssistant {
		return reject(RejectRole, "message role %q, want %q", describeHostile(string(m.Role)), env.RoleAssistant)
	}
	if m.ToolCallID != "" {
		return reject(RejectShape, "an assistant message with a tool_call_id")
	}
	if len(m.Name) > maxLabelBytes || len(resp.Model) > maxLabelBytes || len(resp.FinishReason) > maxLabelBytes {
		return reject(RejectShape, "a name, model or finish reason over %d bytes", maxLabelBytes)
	}
	if u := resp.Usage; u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 || u.ReasoningTokens < 0 {
		return reject(RejectShape, "negative token usage %+v", u)
	}
	if len(m.ToolCalls) > llm.MaxToolCalls {
		return reject(RejectShape, "%d tool calls, the client keeps at most %d", len(m.ToolCalls), llm.MaxToolCalls)
	}
	offered := make(map[string]bool, len(req.Tools))
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	text := int64(len(m.Content)) + int64(len(m.Reasoning))
	for _, tc := range m.ToolCalls {
		if len(tc.ID) > maxLabelBytes || len(tc.Name) > maxLabelBytes {
			return reject(RejectShape, "a tool call id or name over %d bytes", maxLabelBytes)
		}
		if !offered[tc.Name] {
			return reject(RejectTool, "calls %q, which the request did not offer", describeHostile(tc.Name))
		}
		text += int64(len(tc.Arguments) + len(tc.ID) + len(tc.Name))
	}
	if limit := textLimit(req); limit > 0 && text > limit {
		return reject(RejectSize, "%d bytes of text for max_tokens %d (at most %d)", text, req.Sampling.MaxTokens, limit)
	}
	return nil
}

// textLimit is the most text an answer to req can hold; 0 when the
// request set no max_tokens (only the absolute cap applies then).
func textLimit(req llm.Request) int64 {
	if req.Sampling.MaxTokens <= 0 {
		return 0
	}
	return int64(req.Sampling.MaxTokens)*bytesPerToken + textSlack
}

// describeHostile keeps a hostile string short in a message, with its size.
func describeHostile(s string) string {
	if len(s) <= 64 {
		return s
	}
	return fmt.Sprintf("%s (%d bytes)", textclip.Runes(s, 64, textclip.Ellipsis), len(s))
}

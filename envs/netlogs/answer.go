package netlogs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svbench/svbench/base/clip"
)

// parseAnswer reads a gold answer: "Malicious"/"Benign" in any case, or the
// reference's integer form 1/0 (also as a JSON bool or the strings "1"/"0").
func parseAnswer(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", fmt.Errorf("is missing (want \"Malicious\" or \"Benign\", or 1/0)")
	}
	if raw[0] == '"' {
		// The common form, read without a Decoder's buffer (every row's
		// gold answer, at load and in the report).
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("is not valid JSON: %v", err)
		}
		return answerString(s)
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("is not valid JSON: %v", err)
	}
	switch x := v.(type) {
	case string:
		return answerString(x)
	case json.Number:
		return answerString(x.String())
	case bool:
		if x {
			return LabelMalicious, nil
		}
		return LabelBenign, nil
	}
	return "", fmt.Errorf("must be \"Malicious\" or \"Benign\" (or 1/0), got %s", clip.Bytes(string(raw), 40, clip.Ellipsis))
}

func answerString(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "malicious", "1", "1.0":
		return LabelMalicious, nil
	case "benign", "0", "0.0":
		return LabelBenign, nil
	}
	return "", fmt.Errorf("must be \"Malicious\" or \"Benign\" (or 1/0), got %q", clip.Bytes(s, 40, clip.Ellipsis))
}

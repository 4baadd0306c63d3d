package env

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// echoEnv's payload is its answer string; ParseExample counts its calls.
type echoEnv struct{ parsed *int }

func (echoEnv) Info() Info                                      { return Info{ID: "echo"} }
func (echoEnv) Load(context.Context, string) (*Dataset, error)  { return nil, nil }
func (echoEnv) Start(context.Context, Example) (Episode, error) { return nil, nil }
func (echoEnv) Score(context.Context, Example, *Rollout, string) (Score, error) {
	return Score{}, nil
}
func (e echoEnv) ParseExample(raw json.RawMessage) (Example, error) {
	*e.parsed++
	var ex Example
	if err := json.Unmarshal(raw, &ex); err != nil {
		return Example{}, err
	}
	var a string
	if err := json.Unmarshal(ex.Answer, &a); err != nil {
		return Example{}, err
	}
	ex.Payload = a
	return ex, nil
}

func TestPayloadOf(t *testing.T) {
	n := 0
	e := echoEnv{&n}
	if p, err := PayloadOf[string](e, Example{ID: "a", Answer: json.RawMessage(`"x"`), Payload: "kept"}); err != nil || p != "kept" || n != 0 {
		t.Errorf("an example with its payload: %q %v, %d parses", p, err, n)
	}
	if p, err := PayloadOf[string](e, Example{ID: "a", Answer: json.RawMessage(`"x"`)}); err != nil || p != "x" || n != 1 {
		t.Errorf("a recorded example: %q %v, %d parses", p, err, n)
	}
	if _, err := PayloadOf[string](e, Example{ID: "a", Answer: json.RawMessage(`"x"`), Payload: 3}); err == nil || !strings.Contains(err.Error(), "int") || n != 1 {
		t.Errorf("another environment's payload: %v, %d parses", err, n)
	}
	if _, err := PayloadOf[string](e, Example{ID: "a", Answer: json.RawMessage(`7`)}); err == nil || !strings.Contains(err.Error(), "does not parse back as a echo example") {
		t.Errorf("a row its environment refuses: %v", err)
	}
}

package llmtest

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestRequestOfIsTheBodyDecoded: the request a Respond func sees, read
// from the body decoded once, is what decoding the body into ChatRequest
// gives.
func TestRequestOfIsTheBodyDecoded(t *testing.T) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"u"}]}],"tools":[{"type":"function","function":{"name":"f"}}],"temperature":0.5}`,
		`{"model":"m","messages":[]}`,
		`{"messages":[{"role":"user","content":"u"}]}`,
		`{}`,
	} {
		var raw map[string]any
		if err := json.Unmarshal([]byte(body), &raw); err != nil {
			t.Fatal(err)
		}
		want := ChatRequest{Raw: raw}
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		if got := requestOf(raw); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", body, got, want)
		}
	}
}

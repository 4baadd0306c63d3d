package netlogs

import (
	"context"
	"testing"

	"github.com/svbench/svbench/env"
)

// benchCompletions mixes the shapes models produce.
var benchCompletions = []string{
	`{"label": "Malicious", "confidence": 0.87, "rationale": "failed_auth=171 from one source"}`,
	"```json\n{\"label\": \"Benign\", \"confidence\": 0.7}\n```",
	`<think>fan-out is high</think>{"label": "Malicious", "confidence": 0.93}`,
	`Based on the record: {"label": "Abstain", "confidence": 0.2} That is all.`,
	`{"label": "benign", "confidence": "0.8"}`,
	`I think it is malicious`,
}

func benchScore(b *testing.B, rubric string) {
	e := New()
	ex, err := e.ParseExample([]byte(`{"answer": "Malicious"}`))
	if err != nil {
		b.Fatal(err)
	}
	rollouts := make([]*env.Rollout, len(benchCompletions))
	for i, c := range benchCompletions {
		rollouts[i] = &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: c}}}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := e.Score(ctx, ex, rollouts[i%len(rollouts)], rubric); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "completions/s")
}

func BenchmarkScoreReference(b *testing.B) { benchScore(b, RubricReference) }

func BenchmarkScoreDefault(b *testing.B) { benchScore(b, RubricDefault) }

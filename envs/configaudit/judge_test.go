package configaudit

import (
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// fixedJudge answers every question with one reply and records the prompt.
type fixedJudge struct {
	reply  string
	prompt *string
}

func (j fixedJudge) Ask(_ context.Context, _, prompt string) (string, error) {
	*j.prompt = prompt
	return j.reply, nil
}

func TestRewardSources(t *testing.T) {
	if _, err := NewEnv(env.Options{Params: map[string]string{"reward_source": SourceJudge}}); err == nil || !strings.Contains(err.Error(), "judge") {
		t.Fatalf("llm_judge without a judge: %v", err)
	}
	if _, err := NewEnv(env.Options{Params: map[string]string{"reward_source": "vibes"}}); err == nil {
		t.Fatal("unknown reward_source accepted")
	}
	shared, ds := testEnv(t)
	ex := ds.Examples[0]
	ans := answerRollout(nil, map[string]any{"violations": ex.Payload.(*fixture).Oracle})
	for _, c := range []struct {
		source, reply string
		judge         float64
		executable    bool
	}{
		{SourceJudge, "Yes.", 1, false},
		{SourceJudge, "no", 0, false},
		{SourceHybrid, "yes", 1, true},
	} {
		var seen string
		e, err := NewEnv(env.Options{Judge: fixedJudge{c.reply, &seen}, Params: map[string]string{"reward_source": c.source}})
		if err != nil {
			t.Fatal(err)
		}
		e.once.Do(func() { e.v = shared.v })
		s, err := e.Score(context.Background(), ex, ans, "")
		if err != nil {
			t.Fatal(err)
		}
		if s.Components["judge"] != c.judge {
			t.Errorf("%s/%q: judge %v", c.source, c.reply, s.Components["judge"])
		}
		if _, ok := s.Components["config_auditing"]; ok != c.executable {
			t.Errorf("%s: executable components present = %v", c.source, ok)
		}
		if !strings.Contains(seen, ex.Payload.(*fixture).Path) {
			t.Errorf("judge was not shown the file")
		}
	}
}

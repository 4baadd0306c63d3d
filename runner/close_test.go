package runner

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// resourceEnv hands out episodes that hold a resource and misbehave on
// demand, to check that RunEpisode releases every one exactly once.
type resourceEnv struct {
	open, closed atomic.Int64
	mode         string // "ok", "panic", "error"
}

func (e *resourceEnv) Info() env.Info { return env.Info{ID: "resource", MaxTurns: 3} }
func (e *resourceEnv) Load(context.Context, string) (*env.Dataset, error) {
	return nil, errors.New("unused")
}
func (e *resourceEnv) ParseExample(json.RawMessage) (env.Example, error) { return env.Example{}, nil }
func (e *resourceEnv) Score(context.Context, env.Example, *env.Rollout, string) (env.Score, error) {
	return env.Score{}, nil
}
func (e *resourceEnv) Start(context.Context, env.Example) (env.Episode, error) {
	e.open.Add(1)
	return &resourceEpisode{env: e}, nil
}

type resourceEpisode struct {
	env    *resourceEnv
	closes int
}

func (p *resourceEpisode) Prompt() []env.Message {
	return []env.Message{{Role: env.RoleUser, Content: "go"}}
}
func (p *resourceEpisode) Tools() []env.Tool { return nil }
func (p *resourceEpisode) Step(context.Context, env.Message) (env.StepResult, error) {
	switch p.env.mode {
	case "panic":
		panic("sandbox exploded")
	case "error":
		return env.StepResult{}, errors.New("verifier failed")
	}
	return env.StepResult{Done: true, Reason: "answered"}, nil
}
func (p *resourceEpisode) Close() error {
	p.closes++
	if p.closes > 1 {
		panic("closed twice")
	}
	p.env.closed.Add(1)
	return nil
}

type cancelClient struct{ cancel context.CancelFunc }

func (c cancelClient) Chat(ctx context.Context, _ llm.Request) (llm.Response, error) {
	c.cancel()
	<-ctx.Done()
	return llm.Response{}, ctx.Err()
}

func TestRunEpisodeReleasesResources(t *testing.T) {
	answer := llm.Builtin{Policy: env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Content: "done"}, nil
	})}
	tests := []struct {
		mode    string
		client  func(cancel context.CancelFunc) llm.Client
		wantErr string
	}{
		{"ok", func(context.CancelFunc) llm.Client { return answer }, ""},
		{"error", func(context.CancelFunc) llm.Client { return answer }, "verifier failed"},
		{"panic", func(context.CancelFunc) llm.Client { return answer }, "environment panicked: sandbox exploded"},
		{"ok", func(cancel context.CancelFunc) llm.Client { return cancelClient{cancel} }, "context canceled"},
	}
	for _, tc := range tests {
		t.Run(tc.mode+"/"+tc.wantErr, func(t *testing.T) {
			e := &resourceEnv{mode: tc.mode}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ro, err := RunEpisode(ctx, tc.client(cancel), e, env.Example{ID: "x"}, EpisodeConfig{})
			if tc.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(ro.Error, tc.wantErr)) {
				t.Fatalf("err = %v, rollout error %q; want %q", err, ro.Error, tc.wantErr)
			}
			if e.open.Load() != 1 || e.closed.Load() != 1 {
				t.Fatalf("opened %d, closed %d episodes", e.open.Load(), e.closed.Load())
			}
		})
	}
}

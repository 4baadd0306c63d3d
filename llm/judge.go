package llm

import (
	"context"

	"github.com/svbench/svbench/env"
)

// Judge asks a model for a verdict through the same client evaluations use,
// at temperature 0 (reasoning models get no temperature, as always). It
// implements env.Judge for the llm_judge and hybrid reward sources.
type Judge struct {
	Client    Client
	Model     string
	MaxTokens int
}

// Ask sends one system + user exchange and returns the reply text.
func (j Judge) Ask(ctx context.Context, system, prompt string) (string, error) {
	reply, _, err := j.AskUsage(ctx, system, prompt)
	return reply, err
}

// AskUsage is Ask that also returns the tokens the endpoint reported, so a
// study can state what judging cost.
func (j Judge) AskUsage(ctx context.Context, system, prompt string) (string, env.Usage, error) {
	zero := 0.0
	msgs := []env.Message{{Role: env.RoleSystem, Content: system}, {Role: env.RoleUser, Content: prompt}}
	resp, err := j.Client.Chat(ctx, Request{Model: j.Model, Messages: msgs, Sampling: Sampling{Temperature: &zero, MaxTokens: j.MaxTokens}})
	if err != nil {
		return "", env.Usage{}, err
	}
	return resp.Message.Content, resp.Usage, nil
}

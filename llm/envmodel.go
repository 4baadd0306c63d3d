package llm

import (
	"context"

	"github.com/svbench/svbench/env"
)

// EnvModel serves a model to an environment as an env.Model (a red-team
// target, a safety judge, a live attacker) through the same client
// evaluations use. Sampling is what every call sends; judges want
// temperature 0.
type EnvModel struct {
	Client   Client
	Model    string
	Sampling Sampling
}

// Chat sends the conversation and returns the reply with its usage.
func (m EnvModel) Chat(ctx context.Context, msgs []env.Message) (env.Message, env.Usage, error) {
	resp, err := m.Client.Chat(ctx, Request{Model: m.Model, Messages: msgs, Sampling: m.Sampling})
	if err != nil {
		return env.Message{}, env.Usage{}, err
	}
	return resp.Message, resp.Usage, nil
}

// Name is the model as the endpoint knows it.
func (m EnvModel) Name() string { return m.Model }

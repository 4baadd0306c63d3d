package env

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Command is a tool an environment ships besides its dataset pipelines
// (E5/E6's red-team tournament). Like DataCommand it is data: the CLI makes
// `svbench <Group> <Name>` of it, so internal/cli holds no environment's
// tool.
type Command struct {
	// Group and Name place the command: `svbench <Group> <Name>`. Commands
	// of every environment that share a Group share its parent command,
	// whose help is the first non-empty GroupShort.
	Group, GroupShort, Name string
	// Args is the usage after the command's name ("FILE").
	Args                 string
	Short, Long, Example string
	// MinArgs and MaxArgs bound the positional arguments (MaxArgs < 0:
	// any number).
	MinArgs, MaxArgs int
	// Models asks for the CLI's shared model flags (base URL, endpoints
	// file, key variable, sampling, …); the command's runner then gets
	// CommandIO.Models, which resolves models by them.
	Models bool
	// Flags declares the command's own flags on fs, binding them to
	// variables of its own, and returns what runs the command once they
	// are parsed.
	Flags func(fs *pflag.FlagSet) CommandRunner
}

// CommandRunner runs a command with its positional arguments.
type CommandRunner func(ctx context.Context, args []string, io CommandIO) error

// CommandIO is what a command is handed: where it writes (results to Out,
// progress and warnings to Err) and, for a command that asked for them
// (Command.Models), the models it plays.
type CommandIO struct {
	Out, Err io.Writer
	Models   Models
}

// Models plays models named as users type them (builtin:<policy>, an
// alias from the endpoints file, a model on the base URL), served as the
// command line's model flags say. The CLI implements it, so that an
// environment's command neither builds clients nor imports the CLI.
type Models interface {
	// Model resolves a model an environment talks to in role (ModelTarget,
	// ModelAttacker: asked with the server's defaults; ModelJudge: a
	// served model, asked at temperature 0 for a short answer);
	// concurrency bounds its requests in flight.
	Model(name, role string, concurrency int) (Model, error)
	// Eval runs an evaluation of a model as the policy, as `svbench eval`
	// does (with the command line's sampling), writes its report and
	// returns the run's directory.
	Eval(ctx context.Context, r EvalRequest) (dir string, err error)
}

// EvalRequest is one evaluation a command asks Models.Eval for.
type EvalRequest struct {
	Env Environment
	// Model plays the policy: builtin:<policy> of Env, or a served model.
	Model string
	// Dataset is a JSONL file; empty means the environment's own.
	Dataset string
	// N examples (0 = all), Rollouts per example (0 = 1), episodes in
	// flight, and the run's seed.
	N, Rollouts, Concurrency int
	Seed                     uint64
	// MaxConsecutiveErrors stops the run after that many model-call
	// failures in a row; 0 disables.
	MaxConsecutiveErrors int
	// OutDir is the root the run goes under, RunID its name, Params the
	// environment parameters recorded in its metadata.
	OutDir, RunID string
	Params        map[string]string
	// Banner, when set, is said on the command's error stream once the
	// model is resolved and the dataset open, as the run starts.
	Banner string
}

// ParseParams reads key=value parameters (--param) into a map; nil for
// none. A value without "=" or with an empty key is a UsageError.
func ParseParams(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, UsageError{fmt.Errorf("--param %q: want key=value", kv)}
		}
		out[k] = v
	}
	return out, nil
}

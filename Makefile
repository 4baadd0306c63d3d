# svbench developer targets. `make test` is the command CI runs.
GO      ?= go
BIN     ?= bin/svbench
PKGS    ?= ./...
MODELS  ?= builtin:heuristic
N       ?= 0
ENV_ARGS ?=

.PHONY: build install client deps deps-demo test demo bench lint fuzz eval-e1 eval-e2 eval-e4 clean train-demo train-e1 train-e2 gpu-bundle

COMMIT  := $(shell git rev-parse HEAD 2>/dev/null)

# No -trimpath: it changes every package's build-cache key, so `make build`
# after `make demo` or `make test` recompiled kube-linter, trivy and OPA
# (10+ minutes on two cores). The -X stamp only touches the link step.
LDFLAGS := -ldflags "-X github.com/svbench/svbench/base/version.Commit=$(COMMIT)"

build:
	$(GO) build $(LDFLAGS) -o $(BIN) ./cmd/svbench

# Puts svbench on PATH ($(shell go env GOPATH)/bin, or GOBIN).
install:
	$(GO) install $(LDFLAGS) ./cmd/svbench

# Debian packages the suite (deps) or the demo (deps-demo) executes: E3's
# sandbox is bubblewrap and nothing weaker, so it is installed, not assumed.
deps:
	@scripts/deps.sh test

deps-demo:
	@scripts/deps.sh demo

# The Python client (clients/python) in a venv at VENV, offline, with nothing
# written into the checkout; the venv also sees its interpreter's packages
# (Debian's python3-torch, ...). PYTHON picks another interpreter than
# /usr/bin/python3 (whose Debian packages deps.sh then leaves alone).
# scripts/install-client.sh says why a bare `pip install ./clients/python`
# is not this command.
VENV   ?= .venv
PYTHON ?=
client:
	@if [ -z "$(PYTHON)" ]; then scripts/deps.sh client; fi
	@PYTHON="$(PYTHON)" scripts/install-client.sh "$(VENV)"

# golangci-lint (.golangci.yml: the layering rules, the idioms with one
# home, a function-length limit, unused code, gofmt), built from the Go
# module proxy at this pinned version: a few minutes the first time, cached
# after. scripts/lint-probe.sh then plants one violation of each rule and
# fails unless the linter reports every one.
LINT_VERSION  ?= v2.15.0
GOLANGCI_LINT ?= $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(LINT_VERSION)

# The linter, then the whole suite with the race detector (the runner,
# client and server are concurrent; the rest is cheap to include).
test: deps
	$(GO) vet $(PKGS)
	$(GOLANGCI_LINT) run $(PKGS)
	scripts/lint-probe.sh $(GOLANGCI_LINT)
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# Every built-in baseline on every embedded mini set; reports + scoreboard
# under outputs/. No key, no network.
demo: deps-demo build
	$(BIN) demo

# svbench's first training run (train/README.md): a tiny transformer trained
# from scratch on E1's embedded train split with GRPO against `svbench serve` on
# CPU, every arm of the research matrix with three seeds (about 18 minutes on
# two cores; TRAIN_ARGS="--seeds 1" for one), then svbench report/study and
# train/RESULTS.md.
TRAIN_ARGS ?=
train-demo: build
	@scripts/deps.sh train
	/usr/bin/python3 train/run.py matrix --svbench $(BIN) --out train/out/demo --results train/RESULTS.md $(TRAIN_ARGS)

# The E1 training proof's recipe (issue #42, chosen on dev; the dev runs are
# listed from train/results-e1/dev_log.jsonl): the bag encoder with its own
# head into the answer's logits (--condition), GRPO's prompts drawn from the
# generator (--train-generate: 2,000 rows are memorised, not learnt), and the
# format-only warm start (the teacher's labels shuffled), so every label the
# policy knows after RL came from the reward; GRPO, per-component and GDPO
# from it (GRPO's group std drops abstention, the per-component ones keep it:
# train/README), with a KL penalty to that start so abstentions survive the
# first steps (the run without it: train/RESULTS-e1-nokl.md); and, from the
# same start, the attribution arms: the learned reward model, the random
# reward and the teacher distilled for the same number of answers. About an
# hour and a half on 2 quiet cores.
E1_RECIPE := --train-generate 200000 --arms format,format_per_component,format_gdpo,format_distill,format_random,format_rm --kl 0.05 --encoder bag --layers 1 --condition --prompt-mode fields --sft-steps 1200 --sft-batch 256 --sft-lr 3e-3 --steps 150 --prompts 64 --group 8 --lr 1e-3 --threads 2
train-e1: build
	@scripts/deps.sh train
	/usr/bin/python3 train/run.py matrix --svbench $(BIN) --out train/out/e1-c3 --results train/RESULTS-e1.md --dev-log train/results-e1/dev_log.jsonl $(E1_RECIPE) $(TRAIN_ARGS)

# The first tool-using run (issue #42 item 3): E2's Kubernetes rows, every
# rollout a /v1/sessions episode (scanner calls, then violations and a JSON
# Patch); warm start on builtin:tool-autofix, then GRPO on 16 prompts × G 8 at
# temperature 0.5, lr 1e-4, no KL (chosen on dev: train/results-e2/dev_log.jsonl).
# About 27 minutes a seed on 2 quiet cores (SFT 7, GRPO 20).
E2_RECIPE := --seeds 1,2,3 --sft-steps 500 --steps 100 --temperature 0.5 --prompts 16 --lr 1e-4
train-e2: build
	@scripts/deps.sh train
	/usr/bin/python3 train/run.py e2 --svbench $(BIN) --out train/out/e2 $(E2_RECIPE) $(TRAIN_ARGS)
	/usr/bin/python3 train/run.py e2-results train/out/e2 --results train/RESULTS-e2.md --dev-log train/results-e2/dev_log.jsonl

# The svbench binary train/gpu.sh runs on a lent GPU machine, which has no Go:
# symbols stripped and xz-compressed into .gpu/svbench.xz (about 44 MB), so it
# travels with the tree inside the device tool's 64 MiB (`carry: [".gpu"]`).
# The whole GPU check, E1 and E2: train/README.md, "On a GPU".
gpu-bundle:
	@mkdir -p .gpu
	$(GO) build -ldflags "-s -w -X github.com/svbench/svbench/base/version.Commit=$(COMMIT)" -o .gpu/svbench ./cmd/svbench
	xz -T0 -6 -f .gpu/svbench
	@ls -l .gpu/svbench.xz

# Benchmarks, then the soak tests (TestSoak* in SOAK_PKGS), which `make test`
# skips: they run only when SVBENCH_SOAK names a duration. SOAK is how long
# each soak lasts: `make bench SOAK=5m` for a long run, SOAK=0 to skip them.
SOAK      ?= 3s
SOAK_PKGS ?= ./server
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s $(PKGS)
	SVBENCH_SOAK=$(SOAK) $(GO) test -count=1 -run '^TestSoak' -v $(SOAK_PKGS)

lint:
	$(GO) vet $(PKGS)
	$(GOLANGCI_LINT) run $(PKGS)
	scripts/lint-probe.sh $(GOLANGCI_LINT)

# Short fuzzing pass over every fuzz target (FUZZTIME per target).
FUZZTIME ?= 15s
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Compatibility with the reference's make targets: make eval-e1 MODELS=a,b N=10
eval-e1:
	$(GO) run ./cmd/svbench eval --env e1 --model "$(MODELS)" -n $(N) $(ENV_ARGS)

eval-e2:
	$(GO) run ./cmd/svbench eval --env e2 --model "$(MODELS)" -n $(N) $(ENV_ARGS)

eval-e4:
	$(GO) run ./cmd/svbench eval --env e4 --model "$(MODELS)" -n $(N) $(ENV_ARGS)

clean:
	rm -rf bin outputs

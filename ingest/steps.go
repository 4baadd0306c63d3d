package ingest

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// StepMetricsFile is the per-step metrics export of a hosted training run
// (Prime's hosted training, as the reference's collector downloads it):
// {"metrics": [one object per step]} with keys such as
// reward/<env>/mean|min|max, metrics/<env>/<reward function>,
// eval/<env>/avg@1, decode_len/<env>/mean, time/step and step.
const StepMetricsFile = "metrics_raw.json"

// MaxStepMetricsBytes bounds the file: a trainer's export is input svbench
// does not control.
const MaxStepMetricsBytes = 64 << 20

// StepMetrics is one environment's per-step figures as the trainer logged
// them.
type StepMetrics struct {
	// Env is the environment key the trainer used ("intertwine/sv-env-network-logs").
	Env string `json:"env"`
	// Source names the file read.
	Source string `json:"source"`
	Steps  []Step `json:"steps"`
}

// Step is one training step. Pointers are nil where the trainer logged
// nothing (the last step of a hosted run holds only the final eval).
type Step struct {
	Step       int64              `json:"step"`
	Reward     *float64           `json:"reward_mean,omitempty"`
	RewardMin  *float64           `json:"reward_min,omitempty"`
	RewardMax  *float64           `json:"reward_max,omitempty"`
	Components map[string]float64 `json:"components,omitempty"`
	// Eval is the trainer's evaluation figure (eval/<env>/avg@1).
	Eval         *float64 `json:"eval,omitempty"`
	DecodeLen    *float64 `json:"decode_len_mean,omitempty"`
	DecodeLenMin *float64 `json:"decode_len_min,omitempty"`
	DecodeLenMax *float64 `json:"decode_len_max,omitempty"`
	Seconds      *float64 `json:"step_seconds,omitempty"`
}

// ReadStepMetrics reads metrics_raw.json from dir; (nil, nil) when there is
// none. It accepts {"metrics": [...]}, a bare list, or JSON lines of step
// objects. Steps without a step number are skipped; the environment is the
// one with the most reward/<env>/mean values ("all" only when it is alone).
func ReadStepMetrics(dir string) (*StepMetrics, error) {
	p := filepath.Join(dir, StepMetricsFile)
	b, err := readUpTo(p, MaxStepMetricsBytes+1)
	if b == nil || err != nil {
		return nil, err
	}
	if len(b) > MaxStepMetricsBytes {
		return nil, fmt.Errorf("%s: over %d MiB; not read", p, MaxStepMetricsBytes>>20)
	}
	sm, err := ParseStepMetrics(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return sm, nil
}

// ParseStepMetrics reads the contents of a metrics_raw.json (see
// ReadStepMetrics) already in memory; the caller bounds its size.
func ParseStepMetrics(b []byte) (*StepMetrics, error) {
	objs, err := stepObjects(b)
	if err != nil {
		return nil, err
	}
	sm := &StepMetrics{Env: pickEnv(objs), Source: StepMetricsFile}
	for _, o := range objs {
		st, ok := number(o["step"])
		if !ok || st != math.Trunc(st) || st < 0 || st > 1e9 {
			continue
		}
		s := Step{Step: int64(st)}
		get := func(k string) *float64 {
			if v, ok := number(o[k]); ok {
				return &v
			}
			return nil
		}
		pre := "/" + sm.Env + "/"
		s.Reward, s.RewardMin, s.RewardMax = get("reward"+pre+"mean"), get("reward"+pre+"min"), get("reward"+pre+"max")
		s.Eval = get("eval" + pre + "avg@1")
		s.DecodeLen, s.DecodeLenMin, s.DecodeLenMax = get("decode_len"+pre+"mean"), get("decode_len"+pre+"min"), get("decode_len"+pre+"max")
		s.Seconds = get("time/step")
		for k, v := range o {
			name, ok := strings.CutPrefix(k, "metrics"+pre)
			if !ok {
				continue
			}
			comp, isComp := ComponentName(name)
			if !isComp {
				continue
			}
			if x, ok := number(v); ok {
				if s.Components == nil {
					s.Components = map[string]float64{}
				}
				s.Components[comp] = x
			}
		}
		sm.Steps = append(sm.Steps, s)
	}
	slices.SortStableFunc(sm.Steps, func(a, b Step) int { return cmp.Compare(a.Step, b.Step) })
	if len(sm.Steps) == 0 {
		return nil, errors.New("no step objects with a \"step\" number")
	}
	return sm, nil
}

func stepObjects(b []byte) ([]map[string]json.RawMessage, error) {
	t := bytes.TrimSpace(b)
	var objs []map[string]json.RawMessage
	switch {
	case bytes.HasPrefix(t, []byte("[")):
		if err := json.Unmarshal(t, &objs); err != nil {
			return nil, fmt.Errorf("want a list of step objects: %w", err)
		}
	case bytes.HasPrefix(t, []byte("{")):
		var wrap map[string]json.RawMessage
		if err := json.Unmarshal(t, &wrap); err == nil {
			if m, ok := wrap["metrics"]; ok {
				if err := json.Unmarshal(m, &objs); err != nil {
					return nil, fmt.Errorf("field \"metrics\": want a list of step objects: %w", err)
				}
				return objs, nil
			}
			if _, ok := wrap["step"]; ok {
				return []map[string]json.RawMessage{wrap}, nil
			}
		}
		// JSON lines, one step object per line.
		sc := bufio.NewScanner(bytes.NewReader(t))
		sc.Buffer(make([]byte, 0, 64<<10), MaxStepMetricsBytes)
		for line := 1; sc.Scan(); line++ {
			l := bytes.TrimSpace(sc.Bytes())
			if len(l) == 0 {
				continue
			}
			var o map[string]json.RawMessage
			if err := json.Unmarshal(l, &o); err != nil {
				return nil, fmt.Errorf("line %d: want a step object: %w", line, err)
			}
			objs = append(objs, o)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("want {\"metrics\": [step objects]}, a list of step objects, or JSON lines")
	}
	return objs, nil
}

// pickEnv finds the environment key with the most reward/<env>/mean values.
func pickEnv(objs []map[string]json.RawMessage) string {
	count := map[string]int{}
	for _, o := range objs {
		for k, v := range o {
			env, ok := strings.CutPrefix(k, "reward/")
			if !ok {
				continue
			}
			env, ok = strings.CutSuffix(env, "/mean")
			if !ok {
				continue
			}
			if _, isNum := number(v); isNum {
				count[env]++
			}
		}
	}
	best, n := "all", -1
	for _, k := range slices.Sorted(maps.Keys(count)) {
		c := count[k]
		if k == "all" {
			c-- // prefer a named environment when counts tie
		}
		if c > n {
			best, n = k, c
		}
	}
	return best
}

// readUpTo reads at most max bytes of the file at p; (nil, nil) when it
// does not exist. Callers decide what a file that fills max means.
func readUpTo(p string, max int64) ([]byte, error) {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

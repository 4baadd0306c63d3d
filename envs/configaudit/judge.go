package configaudit

import (
	"context"
	"fmt"
	"strings"
)

const judgeSystem = `You grade security audits of configuration files. Reply with exactly one word: yes or no.`

// judge asks the configured judge whether the audit and patch are correct:
// 1 for yes, 0 for no. Sampling (temperature 0) is the judge client's job.
func (e *Env) judge(ctx context.Context, fx *fixture, answer string) (float64, error) {
	if e.opts.Judge == nil {
		return 0, fmt.Errorf("reward_source=%s needs a judge model, and none is configured", e.source)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "File path: %s\n\n%s\n\n", fx.Path, truncate(string(fx.Content), 32<<10))
	fmt.Fprintf(&b, "Known violations (tool/rule ids): %s\n\n", strings.Join(ids(fx.Oracle), ", "))
	fmt.Fprintf(&b, "Audit to grade:\n%s\n\n", truncate(answer, 32<<10))
	b.WriteString("Are the reported violations correct and complete, and does the patch (if any) fix them without removing workloads or resources? Answer yes or no.")
	reply, err := e.opts.Judge.Ask(ctx, judgeSystem, b.String())
	if err != nil {
		return 0, fmt.Errorf("judge: %w", err)
	}
	return parseYesNo(reply), nil
}

// parseYesNo reads the first word; anything but yes is no (fail closed).
func parseYesNo(s string) float64 {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimLeft(s, "\"'*` ")
	if strings.HasPrefix(s, "yes") {
		return 1
	}
	return 0
}

package codevuln

import (
	"context"
	"maps"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// ReferencePolicy answers with the task's reference fix as a diff, read
// from the example's task rather than the prompt (builtin:reference-fix's
// way): the answer every row must reward as solved (envtest.Referencer,
// issue #41).
func (e *Env) ReferencePolicy(ex env.Example) (env.Policy, error) {
	t, err := e.taskOf(ex)
	if err != nil {
		return nil, err
	}
	return fixedAnswer(answerMsg(ApplyableDiff(Files(t.Src), Files(t.Fixed()), t.Files), true, "Reference fix.")), nil
}

// InertPolicies are an empty reply and an inert edit: the vulnerable code
// with a function that is never called appended, a substantive patch that
// fixes nothing (envtest.Inerter). Neither may solve a row. builtin:noop
// is left out: Solved refuses a patch that changes nothing before any
// test counts, so only the inert edit asks whether the hidden tests catch
// the vulnerable code.
func (e *Env) InertPolicies(ex env.Example) map[string]env.Policy {
	out := map[string]env.Policy{"empty": fixedAnswer(env.Message{Role: env.RoleAssistant})}
	if t, err := e.taskOf(ex); err == nil && len(t.Files) > 0 {
		out["inert-edit"] = fixedAnswer(answerMsg(ApplyableDiff(Files(t.Src), inertlyEdited(t), t.Files), true, "Inert edit."))
	}
	return out
}

// inertlyEdited is the vulnerable source with an uncalled function
// appended to its first editable file.
func inertlyEdited(t *taskset.Task) Files {
	out := maps.Clone(Files(t.Src))
	f := t.Files[0]
	add := "\n\ndef _svbench_inert():\n    return None\n"
	switch {
	case t.Language == taskset.Go:
		add = "\nfunc svbenchInert() {}\n"
	case taskset.Compiled(t.Language):
		add = "\nstatic void svbench_inert(void) {}\n"
	case t.Language == taskset.JavaScript:
		add = "\nfunction svbenchInert() {}\n"
	}
	out[f] = append(append([]byte(nil), t.Src[f]...), add...)
	return out
}

func fixedAnswer(m env.Message) env.Policy {
	return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) { return m, nil })
}

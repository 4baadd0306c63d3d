package codevuln

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/svbench/svbench/env"
)

// Built-in policies (`builtin:<name>`).
const (
	// PolicyNoop answers with an empty patch: the floor.
	PolicyNoop = "noop"
	// PolicyReferenceFix is an ORACLE: it looks the task up by the id in
	// the prompt and answers with the reference fix's diff. It is the upper
	// bound the verifiers allow, not a model-comparable baseline.
	PolicyReferenceFix = "reference-fix"
	// PolicyStaticAutofix runs the static analysers through the tool and
	// applies rule-based rewrites for the findings it knows (safe YAML
	// loading, secrets instead of random, SHA-256 instead of MD5/SHA-1,
	// literal_eval instead of eval, TLS verification on, …).
	PolicyStaticAutofix = "static-autofix"
)

// Policy returns a built-in baseline.
func (e *Env) Policy(name string) (env.Policy, bool) {
	switch name {
	case PolicyNoop:
		return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
			return answerMsg("", false, "No change."), nil
		}), true
	case PolicyReferenceFix:
		return env.PolicyFunc(func(_ context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
			t := e.task(promptTaskID(conv))
			if t == nil {
				return env.Message{}, fmt.Errorf("reference-fix: no known task id in the prompt")
			}
			diff := ApplyableDiff(Files(t.Src), Files(t.Fixed()), t.Files)
			return answerMsg(diff, true, "Reference fix (oracle)."), nil
		}), true
	case PolicyStaticAutofix:
		return env.PolicyFunc(staticAutofix), true
	}
	return nil, false
}

func answerMsg(diff string, passed bool, expl string) env.Message {
	b, _ := json.Marshal(map[string]any{"diff": diff, "tests_passed": passed, "explanation": expl})
	return env.Message{Role: env.RoleAssistant, Content: string(b)}
}

var taskLine = regexp.MustCompile(`(?m)^Task ([a-z0-9-]+) \(`)

func promptTaskID(conv []env.Message) string {
	for _, m := range conv {
		if m.Role == env.RoleUser {
			if mm := taskLine.FindStringSubmatch(m.Content); mm != nil {
				return mm[1]
			}
		}
	}
	return ""
}

var promptFileRe = regexp.MustCompile("(?s)\n### ([^\n]+)\n```[a-z]*\n(.*?)```\n")

// promptFiles reads the editable files shown in the user prompt.
func promptFiles(conv []env.Message) (Files, []string) {
	files := Files{}
	var names []string
	for _, m := range conv {
		if m.Role != env.RoleUser {
			continue
		}
		for _, mm := range promptFileRe.FindAllStringSubmatch(m.Content, -1) {
			files[mm[1]] = []byte(mm[2])
			names = append(names, mm[1])
		}
		break
	}
	return files, names
}

func staticAutofix(_ context.Context, conv []env.Message, tools []env.Tool) (env.Message, error) {
	var findings []Finding
	called := false
	for _, m := range conv {
		if m.Role == env.RoleTool && m.Name == FnStatic {
			called = true
			var r struct {
				Findings []Finding `json:"findings"`
			}
			if json.Unmarshal([]byte(m.Content), &r) == nil {
				findings = append(findings, r.Findings...)
			}
		}
	}
	hasTool := false
	for _, t := range tools {
		hasTool = hasTool || t.Name == FnStatic
	}
	if !called && hasTool {
		return env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "static-1", Name: FnStatic, Arguments: "{}"}}}, nil
	}
	files, names := promptFiles(conv)
	fixed := Files{}
	for n, b := range files {
		fixed[n] = b
	}
	rules := map[string]bool{}
	for _, f := range findings {
		rules[f.RuleID] = true
	}
	var applied []string
	for _, n := range names {
		src := string(files[n])
		out := autofix(src, rules, strings.HasSuffix(n, ".go"))
		if out != src {
			fixed[n] = []byte(out)
			applied = append(applied, n)
		}
	}
	if len(applied) == 0 {
		return answerMsg("", false, "No rule-based fix applies to the findings."), nil
	}
	return answerMsg(ApplyableDiff(files, fixed, names), true, "Rule-based fixes for the static findings in "+strings.Join(applied, ", ")+"."), nil
}

var (
	yamlLoadRe  = regexp.MustCompile(`yaml\.load\(([^,()]+)(?:,\s*Loader\s*=\s*[\w.]+)?\)`)
	randCallRe  = regexp.MustCompile(`\brandom\.(choice|getrandbits)\(`)
	weakHashRe  = regexp.MustCompile(`hashlib\.(md5|sha1)\(`)
	evalRe      = regexp.MustCompile(`(^|[^\w.])eval\(`)
	goMD5Re     = regexp.MustCompile(`\b(md5|sha1)\.(Sum|New)\b`)
	goTLSOldRe  = regexp.MustCompile(`tls\.Version(TLS10|TLS11|SSL30)`)
	importLine  = regexp.MustCompile(`(?m)^(import [^\n]+\n|from [^\n]+ import [^\n]+\n)`)
	goImportMD5 = regexp.MustCompile(`"crypto/(md5|sha1)"`)
)

// autofix applies the rewrites whose rules fired.
func autofix(src string, rules map[string]bool, isGo bool) string {
	if isGo {
		if rules["SVGO-TLSVERIFY"] {
			src = strings.ReplaceAll(src, "InsecureSkipVerify: true", "InsecureSkipVerify: false")
		}
		if rules["SVGO-TLSVERSION"] {
			src = goTLSOldRe.ReplaceAllString(src, "tls.VersionTLS12")
		}
		if rules["SVGO-WEAKCRYPTO"] {
			src = goMD5Re.ReplaceAllStringFunc(src, func(m string) string {
				if strings.HasSuffix(m, "Sum") {
					return "sha256.Sum256"
				}
				return "sha256.New"
			})
			if strings.Contains(src, `"crypto/sha256"`) {
				src = goImportMD5.ReplaceAllString(src, "")
			} else {
				src = goImportMD5.ReplaceAllString(src, `"crypto/sha256"`)
			}
		}
		return src
	}
	var imports []string
	if rules["B506"] {
		src = yamlLoadRe.ReplaceAllString(src, "yaml.safe_load($1)")
	}
	if rules["B311"] && randCallRe.MatchString(src) {
		src = randCallRe.ReplaceAllStringFunc(src, func(m string) string {
			if strings.Contains(m, "getrandbits") {
				return "secrets.randbits("
			}
			return "secrets.choice("
		})
		imports = append(imports, "secrets")
	}
	if rules["B303"] || rules["B324"] {
		src = weakHashRe.ReplaceAllString(src, "hashlib.sha256(")
	}
	if rules["B307"] && evalRe.MatchString(src) {
		src = evalRe.ReplaceAllString(src, "${1}ast.literal_eval(")
		imports = append(imports, "ast")
	}
	if rules["B501"] {
		src = strings.ReplaceAll(src, "verify=False", "verify=True")
	}
	if rules["SVPY-TLS"] {
		src = strings.ReplaceAll(src, "check_hostname = False", "check_hostname = True")
		src = strings.ReplaceAll(src, "ssl.CERT_NONE", "ssl.CERT_REQUIRED")
	}
	for _, m := range imports {
		if regexp.MustCompile(`(?m)^import ` + m + `\b`).MatchString(src) {
			continue
		}
		if loc := importLine.FindStringIndex(src); loc != nil {
			src = src[:loc[0]] + "import " + m + "\n" + src[loc[0]:]
		} else {
			src = "import " + m + "\n" + src
		}
	}
	return src
}

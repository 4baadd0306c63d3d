package configaudit

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/env"
)

// Built-in policies.
const (
	PolicyToolOnly    = "tool-only"
	PolicyToolAutofix = "tool-autofix"
)

// Policy returns a built-in baseline. Both read only the conversation: the
// file path and text from the user message, the findings from tool results.
func (e *Env) Policy(name string) (env.Policy, bool) {
	switch name {
	case PolicyToolOnly:
		return env.PolicyFunc(func(ctx context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
			return actBaseline(conv, false)
		}), true
	case PolicyToolAutofix:
		return env.PolicyFunc(func(ctx context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
			return actBaseline(conv, true)
		}), true
	case PolicyOracle:
		if e.mode != ModePolicy {
			return nil, false
		}
		return env.PolicyFunc(func(ctx context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
			return e.actPolicyOracle(ctx, conv)
		}), true
	}
	return nil, false
}

// fileUnderAudit reads the file path and text from a conversation's last
// user message, as every built-in policy does.
func fileUnderAudit(conv []env.Message) (path, content string, err error) {
	var user string
	for _, m := range conv {
		if m.Role == env.RoleUser {
			user = m.Content
		}
	}
	p, content, ok := splitPathHeader(user)
	if !ok {
		return "", "", fmt.Errorf("policy: the user message does not start with \"File path: \"")
	}
	return p, content, nil
}

// answerMessage encodes a built-in policy's final answer.
func answerMessage(ans map[string]any) (env.Message, error) {
	b, err := json.Marshal(ans)
	if err != nil {
		return env.Message{}, err
	}
	return env.Message{Role: env.RoleAssistant, Content: string(b)}, nil
}

func actBaseline(conv []env.Message, fix bool) (env.Message, error) {
	p, content, err := fileUnderAudit(conv)
	if err != nil {
		return env.Message{}, err
	}
	called := false
	for _, m := range conv {
		if m.Role == env.RoleTool {
			called = true
		}
	}
	if !called {
		args, _ := json.Marshal(map[string]string{"path": p})
		first := FnKubeLinter
		if fixtureTypeFor(p) == FixtureTF {
			first = FnTrivy
		}
		return env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{
			{ID: "call_1", Name: first, Arguments: string(args)},
			{ID: "call_2", Name: FnOPA, Arguments: string(args)},
		}}, nil
	}
	found := observedIDs(conv)
	ans := map[string]any{"violations": nonNil(found), "confidence": 0.9}
	if fix && len(found) > 0 {
		fixed, err := autofix(fixtureTypeFor(p), []byte(content), found)
		if err == nil {
			if d := unifiedDiff(p, []byte(content), fixed); d != "" {
				ans["patch"] = d
			}
		}
	}
	return answerMessage(ans)
}

func hasAny(found map[string]bool, ids ...string) bool {
	for _, id := range ids {
		if found[id] {
			return true
		}
	}
	return false
}

// autofix applies rule-based fixes for the findings reported.
func autofix(fixtureType string, content []byte, found []Violation) ([]byte, error) {
	f := map[string]bool{}
	for _, v := range found {
		f[v.ID] = true
	}
	if fixtureType == FixtureTF {
		return []byte(autofixTF(string(content), f)), nil
	}
	docs, err := parseYAMLDocs(content)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		autofixK8sDoc(d, f)
	}
	return renderYAML(docs)
}

var secretName = regexp.MustCompile(`(?i)(secret|password|passwd|token|api_?key|credential)`)

func autofixK8sDoc(d *yaml.Node, f map[string]bool) {
	kind := scalarValue(mget(d, "kind"))
	if spec := podSpec(d); spec != nil {
		if f["kube-linter/host-network"] {
			mdel(spec, "hostNetwork")
		}
		if f["kube-linter/host-pid"] {
			mdel(spec, "hostPID")
		}
		if f["kube-linter/host-ipc"] {
			mdel(spec, "hostIPC")
		}
		if f["opa/K8S_SA_TOKEN_AUTOMOUNT"] {
			mset(spec, "automountServiceAccountToken", boolNode(false))
		}
		badVols := map[string]bool{}
		if hasAny(f, "kube-linter/docker-sock", "kube-linter/sensitive-host-mounts", "opa/K8S_DOCKER_SOCK", "opa/K8S_SENSITIVE_HOSTPATH") {
			if vols := mget(spec, "volumes"); vols != nil {
				kept := vols.Content[:0]
				for _, v := range vols.Content {
					hp := scalarValue(mpath(v, "hostPath", "path"))
					if strings.HasSuffix(hp, "docker.sock") || strings.HasSuffix(hp, "containerd.sock") || sensitiveHostPath(hp) {
						badVols[scalarValue(mget(v, "name"))] = true
						continue
					}
					kept = append(kept, v)
				}
				vols.Content = kept
				if len(kept) == 0 {
					mdel(spec, "volumes")
				}
			}
		}
		name := scalarValue(mpath(d, "metadata", "name"))
		for _, c := range containers(spec, true) {
			autofixContainer(c, f, badVols, name)
		}
	}
	if kind == "Role" || kind == "ClusterRole" {
		rules := mget(d, "rules")
		if rules != nil {
			for _, r := range rules.Content {
				if hasAny(f, "kube-linter/wildcard-in-rules", "opa/K8S_RBAC_WILDCARD") {
					replaceWildcard(r, "verbs", "get", "list", "watch")
					replaceWildcard(r, "resources", "configmaps")
					replaceWildcard(r, "apiGroups", "")
				}
				if f["kube-linter/access-to-secrets"] {
					if res := mget(r, "resources"); res != nil {
						kept := res.Content[:0]
						for _, x := range res.Content {
							if x.Value != "secrets" {
								kept = append(kept, x)
							}
						}
						res.Content = kept
						if len(kept) == 0 {
							res.Content = []*yaml.Node{strNode("configmaps")}
						}
					}
				}
			}
		}
	}
	if kind == "ClusterRoleBinding" && f["kube-linter/cluster-admin-role-binding"] {
		if ref := mget(d, "roleRef"); scalarValue(mget(ref, "name")) == "cluster-admin" {
			mset(ref, "name", strNode("view"))
		}
	}
}

func replaceWildcard(rule *yaml.Node, key string, with ...string) {
	seq := mget(rule, key)
	if seq == nil {
		return
	}
	for _, x := range seq.Content {
		if x.Value == "*" {
			n := flowSeq(with...)
			n.Style = seq.Style
			mset(rule, key, n)
			return
		}
	}
}

func sensitiveHostPath(p string) bool {
	switch p {
	case "/", "/boot", "/dev", "/etc", "/lib", "/proc", "/sys", "/usr":
		return true
	}
	return false
}

func autofixContainer(c *yaml.Node, f map[string]bool, badVols map[string]bool, objName string) {
	sc := func() *yaml.Node { return ensureMap(c, "securityContext") }
	if hasAny(f, "kube-linter/privileged-container", "kube-linter/privilege-escalation-container", "opa/K8S_PRIVILEGED_ESCALATION") {
		if s := mget(c, "securityContext"); s != nil && scalarValue(mget(s, "privileged")) == "true" {
			mdel(s, "privileged")
		}
	}
	if hasAny(f, "kube-linter/privilege-escalation-container", "opa/K8S_PRIVILEGED_ESCALATION") {
		mset(sc(), "allowPrivilegeEscalation", boolNode(false))
	}
	if hasAny(f, "kube-linter/drop-net-raw-capability", "kube-linter/privilege-escalation-container", "opa/K8S_DANGEROUS_CAPABILITY") {
		if caps := mget(sc(), "capabilities"); caps == nil || mget(caps, "add") != nil || mget(caps, "drop") == nil {
			mset(sc(), "capabilities", mapNode("drop", flowSeq("ALL")))
		}
	}
	if f["kube-linter/run-as-non-root"] {
		s := sc()
		mset(s, "runAsNonRoot", boolNode(true))
		if u := mget(s, "runAsUser"); u == nil || u.Value == "0" {
			mset(s, "runAsUser", intNode(10001))
		}
	}
	if f["kube-linter/no-read-only-root-fs"] {
		mset(sc(), "readOnlyRootFilesystem", boolNode(true))
	}
	if f["kube-linter/latest-tag"] {
		if img := mget(c, "image"); img != nil {
			repo := imageRepo(img.Value)
			if img.Value == repo || strings.HasSuffix(img.Value, ":latest") {
				img.Value = repo + ":stable"
			}
		}
	}
	if hasAny(f, "kube-linter/unset-cpu-requirements", "kube-linter/unset-memory-requirements") {
		res := ensureMap(c, "resources")
		req, lim := ensureMap(res, "requests"), ensureMap(res, "limits")
		for _, kv := range [][3]string{{"requests", "cpu", "100m"}, {"requests", "memory", "128Mi"}, {"limits", "cpu", "500m"}, {"limits", "memory", "256Mi"}} {
			m := req
			if kv[0] == "limits" {
				m = lim
			}
			if mget(m, kv[1]) == nil {
				mset(m, kv[1], strNode(kv[2]))
			}
		}
	}
	if hasAny(f, "kube-linter/env-var-secret", "opa/K8S_SECRET_IN_ENV") {
		if envs := mget(c, "env"); envs != nil {
			for _, e := range envs.Content {
				name := scalarValue(mget(e, "name"))
				if mget(e, "value") != nil && secretName.MatchString(name) {
					mdel(e, "value")
					mset(e, "valueFrom", mapNode("secretKeyRef", mapNode("name", objName+"-secrets", "key", strings.ToLower(name))))
				}
			}
		}
	}
	if f["kube-linter/ssh-port"] {
		if ports := mget(c, "ports"); ports != nil {
			kept := ports.Content[:0]
			for _, p := range ports.Content {
				if scalarValue(mget(p, "containerPort")) != "22" {
					kept = append(kept, p)
				}
			}
			ports.Content = kept
		}
	}
	if len(badVols) > 0 {
		if mounts := mget(c, "volumeMounts"); mounts != nil {
			kept := mounts.Content[:0]
			for _, m := range mounts.Content {
				if !badVols[scalarValue(mget(m, "name"))] {
					kept = append(kept, m)
				}
			}
			mounts.Content = kept
			if len(kept) == 0 {
				mdel(c, "volumeMounts")
			}
		}
	}
}

// tfRule is a line rewrite applied when any of its ids was reported, and
// only inside blocks named in `in` (empty: anywhere).
type tfRule struct {
	ids  []string
	in   string
	re   *regexp.Regexp
	repl string
}

var tfRules = []tfRule{
	{ids: []string{"trivy/AVD-AWS-0086"}, re: regexp.MustCompile(`^(\s*block_public_acls\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AWS-0087"}, re: regexp.MustCompile(`^(\s*block_public_policy\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AWS-0091"}, re: regexp.MustCompile(`^(\s*ignore_public_acls\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AWS-0093"}, re: regexp.MustCompile(`^(\s*restrict_public_buckets\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AWS-0092", "opa/TF_S3_PUBLIC_ACL"}, re: regexp.MustCompile(`^(\s*acl\s*=\s*)"(public-read|public-read-write|authenticated-read)"`), repl: `${1}"private"`},
	{ids: []string{"trivy/AVD-AWS-0090"}, re: regexp.MustCompile(`^(\s*status\s*=\s*)"Suspended"`), repl: `${1}"Enabled"`},
	{ids: []string{"trivy/AVD-AWS-0107", "opa/TF_SG_OPEN_ADMIN"}, in: "ingress", re: regexp.MustCompile(`^(\s*cidr_blocks\s*=\s*)\["0\.0\.0\.0/0"\]`), repl: `${1}["10.0.0.0/8"]`},
	{ids: []string{"trivy/AVD-AWS-0104"}, in: "egress", re: regexp.MustCompile(`^(\s*cidr_blocks\s*=\s*)\["0\.0\.0\.0/0"\]`), repl: `${1}["10.0.0.0/8"]`},
	{ids: []string{"trivy/AVD-AWS-0345", "opa/TF_IAM_WILDCARD_ACTION"}, re: regexp.MustCompile(`"s3:\*"`), repl: `"s3:GetObject"`},
	{ids: []string{"trivy/AVD-AWS-0180", "opa/TF_RDS_PUBLIC"}, re: regexp.MustCompile(`^(\s*publicly_accessible\s*=\s*)true`), repl: "${1}false"},
	{ids: []string{"trivy/AVD-AWS-0080", "opa/TF_RDS_UNENCRYPTED"}, re: regexp.MustCompile(`^(\s*storage_encrypted\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AWS-0077"}, re: regexp.MustCompile(`^(\s*backup_retention_period\s*=\s*)0\b`), repl: "${1}7"},
	{ids: []string{"trivy/AVD-AWS-0028"}, re: regexp.MustCompile(`^(\s*http_tokens\s*=\s*)"optional"`), repl: `${1}"required"`},
	{ids: []string{"trivy/AVD-AWS-0131", "trivy/AVD-AWS-0026", "opa/TF_EBS_UNENCRYPTED"}, re: regexp.MustCompile(`^(\s*encrypted\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AWS-0040"}, re: regexp.MustCompile(`^(\s*endpoint_public_access\s*=\s*)true`), repl: "${1}false"},
	{ids: []string{"trivy/AVD-AWS-0041"}, re: regexp.MustCompile(`^(\s*public_access_cidrs\s*=\s*)\["0\.0\.0\.0/0"\]`), repl: `${1}["10.0.0.0/8"]`},
	{ids: []string{"trivy/AVD-GCP-0001"}, re: regexp.MustCompile(`^(\s*member\s*=\s*)"(allUsers|allAuthenticatedUsers)"`), repl: `${1}"group:security-reviewers@example.com"`},
	{ids: []string{"trivy/AVD-GCP-0002", "opa/TF_GCS_UNIFORM_ACCESS_OFF"}, re: regexp.MustCompile(`^(\s*uniform_bucket_level_access\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-GCP-0027"}, re: regexp.MustCompile(`^(\s*source_ranges\s*=\s*)\["0\.0\.0\.0/0"\]`), repl: `${1}["10.0.0.0/8"]`},
	{ids: []string{"trivy/AVD-GCP-0031"}, re: regexp.MustCompile(`^\s*access_config\s*\{\s*\}\s*$`), repl: "\x00"},
	{ids: []string{"trivy/AVD-GCP-0032"}, re: regexp.MustCompile(`^(\s*serial-port-enable\s*=\s*)"true"`), repl: `${1}"false"`},
	{ids: []string{"trivy/AVD-GCP-0030"}, re: regexp.MustCompile(`^(\s*block-project-ssh-keys\s*=\s*)"false"`), repl: `${1}"true"`},
	{ids: []string{"trivy/AVD-AZU-0008", "opa/TF_AZURE_STORAGE_HTTP"}, re: regexp.MustCompile(`^(\s*(https_traffic_only_enabled|enable_https_traffic_only)\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AZU-0011"}, re: regexp.MustCompile(`^(\s*min_tls_version\s*=\s*)"TLS1_[01]"`), repl: `${1}"TLS1_2"`},
	{ids: []string{"trivy/AVD-AZU-0007"}, re: regexp.MustCompile(`^(\s*container_access_type\s*=\s*)"(blob|container)"`), repl: `${1}"private"`},
	{ids: []string{"trivy/AVD-AZU-0012"}, re: regexp.MustCompile(`^(\s*default_action\s*=\s*)"Allow"`), repl: `${1}"Deny"`},
	{ids: []string{"trivy/AVD-AZU-0039"}, re: regexp.MustCompile(`^(\s*disable_password_authentication\s*=\s*)false`), repl: "${1}true"},
	{ids: []string{"trivy/AVD-AZU-0047", "trivy/AVD-AZU-0050", "trivy/AVD-AZU-0048"}, in: "security_rule", re: regexp.MustCompile(`^(\s*source_address_prefix\s*=\s*)"(\*|0\.0\.0\.0/0|Internet|Any)"`), repl: `${1}"10.0.0.0/8"`},
}

var tfBlockOpen = regexp.MustCompile(`^\s*([A-Za-z_][\w-]*)\s*(?:"[^"]*"\s*)*\{\s*$`)

func autofixTF(src string, f map[string]bool) string {
	lines := strings.Split(src, "\n")
	var stack []string
	out := lines[:0:0]
	for _, l := range lines {
		if m := tfBlockOpen.FindStringSubmatch(l); m != nil {
			stack = append(stack, m[1])
		} else if strings.HasSuffix(strings.TrimSpace(l), "{") {
			stack = append(stack, "")
		}
		cur := ""
		if len(stack) > 0 {
			cur = stack[len(stack)-1]
		}
		drop := false
		for _, r := range tfRules {
			if !hasAny(f, r.ids...) || (r.in != "" && r.in != cur) || !r.re.MatchString(l) {
				continue
			}
			if r.repl == "\x00" {
				drop = true
				break
			}
			l = r.re.ReplaceAllString(l, r.repl)
		}
		if strings.HasPrefix(strings.TrimSpace(l), "}") && len(stack) > 0 {
			stack = stack[:len(stack)-1]
		}
		if !drop {
			out = append(out, l)
		}
	}
	res := strings.Join(out, "\n")
	if f["trivy/AVD-AWS-0038"] && !strings.Contains(res, "enabled_cluster_log_types") {
		res = regexp.MustCompile(`(?m)^(resource "aws_eks_cluster" "[^"]+" \{\n)`).ReplaceAllString(res, "${1}  enabled_cluster_log_types = [\"api\", \"audit\", \"authenticator\"]\n")
	}
	return res
}

package configaudit

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RBAC effective privilege: what each subject bound in a manifest may do,
// with roles resolved through the file and Kubernetes' built-in
// ClusterRoles (cluster-admin, admin, edit, view, written down below from
// the bootstrap policy) and aggregationRules. A role the file binds but
// neither defines nor is built in grants everything (svbench cannot see
// it; fail closed). Two questions are asked of a patch:
//
//   - growth: does any subject gain an (apiGroup, resource, verb) in a
//     scope it did not hold? Dropping `secrets` from a Role and binding the
//     built-in `admin` is growth;
//   - the capability a finding names: after the patch, may any subject
//     still read secrets (access-to-secrets), use a wildcard
//     (wildcard-in-rules), or do what makes cluster-admin dangerous —
//     read secrets, exec into pods, or anything through a wildcard
//     (cluster-admin-role-binding)? Then the finding is not fixed, however
//     the role is spelled.

type rbacRule struct {
	APIGroups       []string `yaml:"apiGroups"`
	Resources       []string `yaml:"resources"`
	Verbs           []string `yaml:"verbs"`
	NonResourceURLs []string `yaml:"nonResourceURLs"`
}

type rbacSelector struct {
	MatchLabels      map[string]string `yaml:"matchLabels"`
	MatchExpressions []any             `yaml:"matchExpressions"`
}

type rbacObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Rules           []rbacRule `yaml:"rules"`
	AggregationRule *struct {
		ClusterRoleSelectors []rbacSelector `yaml:"clusterRoleSelectors"`
	} `yaml:"aggregationRule"`
	Subjects []struct {
		Kind      string `yaml:"kind"`
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"subjects"`
	RoleRef struct {
		Kind string `yaml:"kind"`
		Name string `yaml:"name"`
	} `yaml:"roleRef"`
}

// rbacAtom is one verb on one resource of one API group in one scope (a
// namespace, or "*" for the cluster).
type rbacAtom struct{ scope, group, resource, verb string }

// maxAtomsPerSubject bounds the atoms kept per subject; beyond it the
// subject is taken to hold everything.
const maxAtomsPerSubject = 8192

var (
	readVerbs  = []string{"get", "list", "watch"}
	writeVerbs = []string{"create", "delete", "deletecollection", "patch", "update"}
	viewCore   = []string{"configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "pods", "pods/log", "pods/status", "replicationcontrollers", "replicationcontrollers/scale", "replicationcontrollers/status", "services", "services/status", "bindings", "events", "limitranges", "namespaces", "namespaces/status", "resourcequotas", "resourcequotas/status", "serviceaccounts"}
	viewGroups = map[string][]string{
		"apps":              {"controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"},
		"autoscaling":       {"horizontalpodautoscalers", "horizontalpodautoscalers/status"},
		"batch":             {"cronjobs", "cronjobs/status", "jobs", "jobs/status"},
		"policy":            {"poddisruptionbudgets", "poddisruptionbudgets/status"},
		"networking.k8s.io": {"ingresses", "ingresses/status", "networkpolicies"},
		"discovery.k8s.io":  {"endpointslices"},
	}
	editCore = []string{"pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "configmaps", "endpoints", "persistentvolumeclaims", "replicationcontrollers", "replicationcontrollers/scale", "secrets", "serviceaccounts", "services", "services/proxy"}
)

// builtinClusterRoles are the default user-facing ClusterRoles with their
// labels (aggregation selects by them) and rules, aggregated in.
var builtinClusterRoles = func() map[string]rbacObject {
	role := func(name string, labels map[string]string, rules ...rbacRule) rbacObject {
		var o rbacObject
		o.Kind, o.Metadata.Name, o.Rules = "ClusterRole", name, rules
		o.Metadata.Labels = map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"}
		maps.Copy(o.Metadata.Labels, labels)
		return o
	}
	view := []rbacRule{{APIGroups: []string{""}, Resources: viewCore, Verbs: readVerbs}}
	edit := []rbacRule{
		{APIGroups: []string{""}, Resources: editCore, Verbs: writeVerbs},
		{APIGroups: []string{""}, Resources: []string{"secrets", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "services/proxy"}, Verbs: readVerbs},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}},
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}},
	}
	for _, g := range slices.Sorted(maps.Keys(viewGroups)) {
		view = append(view, rbacRule{APIGroups: []string{g}, Resources: viewGroups[g], Verbs: readVerbs})
		edit = append(edit, rbacRule{APIGroups: []string{g}, Resources: viewGroups[g], Verbs: writeVerbs})
	}
	edit = append(edit, view...)
	admin := append([]rbacRule{
		{APIGroups: []string{"rbac.authorization.k8s.io"}, Resources: []string{"roles", "rolebindings"}, Verbs: append(slices.Clone(writeVerbs), readVerbs...)},
		{APIGroups: []string{"authorization.k8s.io"}, Resources: []string{"localsubjectaccessreviews"}, Verbs: []string{"create"}},
	}, edit...)
	return map[string]rbacObject{
		"cluster-admin": role("cluster-admin", nil, rbacRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}, rbacRule{NonResourceURLs: []string{"*"}, Verbs: []string{"*"}}),
		"admin":         role("admin", nil, admin...),
		"edit":          role("edit", map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}, edit...),
		"view":          role("view", map[string]string{"rbac.authorization.k8s.io/aggregate-to-edit": "true"}, view...),
	}
}()

var everything = []rbacRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}

type rbacModel struct {
	roles        map[string]rbacObject // "ns/name"
	clusterRoles map[string]rbacObject
	bindings     []rbacObject
}

// rbacPrivileges maps each bound subject of a manifest to its atoms;
// false when the file does not parse.
func rbacPrivileges(content []byte) (map[string]map[rbacAtom]bool, bool) {
	docs, err := parseYAMLDocs(content)
	if err != nil {
		return nil, false
	}
	m := rbacModel{roles: map[string]rbacObject{}, clusterRoles: map[string]rbacObject{}}
	for _, d := range docs {
		var o rbacObject
		if d.Decode(&o) != nil {
			continue
		}
		switch o.Kind {
		case "Role":
			m.roles[orDefault(o.Metadata.Namespace)+"/"+o.Metadata.Name] = o
		case "ClusterRole":
			m.clusterRoles[o.Metadata.Name] = o
		case "RoleBinding", "ClusterRoleBinding":
			m.bindings = append(m.bindings, o)
		}
	}
	out := map[string]map[rbacAtom]bool{}
	for _, b := range m.bindings {
		scope := "*"
		var rules []rbacRule
		switch {
		case b.Kind == "RoleBinding" && b.RoleRef.Kind == "Role":
			scope = orDefault(b.Metadata.Namespace)
			r, ok := m.roles[scope+"/"+b.RoleRef.Name]
			rules = everything
			if ok {
				rules = r.Rules
			}
		default:
			if b.Kind == "RoleBinding" {
				scope = orDefault(b.Metadata.Namespace)
			}
			rules = m.clusterRoleRules(b.RoleRef.Name, 0)
		}
		for _, s := range b.Subjects {
			key := s.Kind + " " + s.Name
			if s.Kind == "ServiceAccount" {
				ns := s.Namespace
				if ns == "" {
					ns = orDefault(b.Metadata.Namespace)
				}
				key = s.Kind + " " + ns + "/" + s.Name
			}
			if out[key] == nil {
				out[key] = map[rbacAtom]bool{}
			}
			addAtoms(out[key], scope, rules)
		}
	}
	return out, true
}

func orDefault(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// clusterRoleRules resolves a ClusterRole by name: the file's own, else a
// built-in, else everything; an aggregationRule adds the rules of every
// ClusterRole (the file's and the built-ins) its selectors match.
func (m rbacModel) clusterRoleRules(name string, depth int) []rbacRule {
	if depth > 4 {
		return everything
	}
	o, ok := m.clusterRoles[name]
	if !ok {
		if o, ok = builtinClusterRoles[name]; !ok {
			return everything
		}
	}
	rules := slices.Clone(o.Rules)
	if o.AggregationRule == nil {
		return rules
	}
	candidates := map[string]rbacObject{}
	maps.Copy(candidates, builtinClusterRoles)
	maps.Copy(candidates, m.clusterRoles)
	for _, sel := range o.AggregationRule.ClusterRoleSelectors {
		if len(sel.MatchExpressions) > 0 {
			return everything
		}
		for _, n := range slices.Sorted(maps.Keys(candidates)) {
			c := candidates[n]
			if n == name || !labelsMatch(sel.MatchLabels, c.Metadata.Labels) {
				continue
			}
			rules = append(rules, m.clusterRoleRules(n, depth+1)...)
		}
	}
	return rules
}

func labelsMatch(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func addAtoms(set map[rbacAtom]bool, scope string, rules []rbacRule) {
	for _, r := range rules {
		groups, resources := r.APIGroups, r.Resources
		if len(r.NonResourceURLs) > 0 {
			groups, resources = []string{"nonresource"}, r.NonResourceURLs
		}
		for _, g := range groups {
			for _, res := range resources {
				for _, v := range r.Verbs {
					if len(set) >= maxAtomsPerSubject {
						clear(set)
						set[rbacAtom{"*", "*", "*", "*"}] = true
						return
					}
					set[rbacAtom{scope, g, strings.ToLower(res), strings.ToLower(v)}] = true
				}
			}
		}
	}
}

func covers(have, want string) bool { return have == "*" || have == want }

// atomCovered looks a up with each of its fields also as "*": sixteen
// lookups, whatever the size of set.
func atomCovered(a rbacAtom, set map[rbacAtom]bool) bool {
	for mask := range 16 {
		b := a
		if mask&1 != 0 {
			b.scope = "*"
		}
		if mask&2 != 0 {
			b.group = "*"
		}
		if mask&4 != 0 {
			b.resource = "*"
		}
		if mask&8 != 0 {
			b.verb = "*"
		}
		if set[b] {
			return true
		}
	}
	return false
}

// rbacGrowth lists subjects that hold, after the patch, an atom they did
// not hold before (a few lines at most).
func rbacGrowth(original, patched []byte) []string {
	p, ok := rbacPrivileges(patched)
	if !ok {
		return nil
	}
	o, _ := rbacPrivileges(original)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		for _, a := range sortedAtoms(p[k]) {
			if !atomCovered(a, o[k]) {
				out = append(out, fmt.Sprintf("RBAC %s gains %s on %s (group %q) in %s", k, a.verb, a.resource, a.group, a.scope))
				break
			}
		}
	}
	return out
}

// rbacCapabilities are the capabilities RBAC findings name, each a test
// on one atom.
var rbacCapabilities = map[string]func(rbacAtom) bool{
	"secrets": func(a rbacAtom) bool {
		return coreGroup(a.group) && covers(a.resource, "secrets") && (slices.Contains(readVerbs, a.verb) || a.verb == "*")
	},
	"exec": func(a rbacAtom) bool {
		return coreGroup(a.group) && covers(a.resource, "pods/exec") && (a.verb == "create" || a.verb == "get" || a.verb == "*")
	},
	"wildcard": func(a rbacAtom) bool { return a.group == "*" || a.resource == "*" || a.verb == "*" },
}

func coreGroup(g string) bool { return g == "" || g == "*" }

// rbacFindingCapabilities maps each RBAC finding to the capabilities whose
// survival means it is not fixed.
var rbacFindingCapabilities = map[string][]string{
	"kube-linter/access-to-secrets":          {"secrets"},
	"kube-linter/wildcard-in-rules":          {"wildcard"},
	"opa/K8S_RBAC_WILDCARD":                  {"wildcard"},
	"kube-linter/cluster-admin-role-binding": {"secrets", "exec", "wildcard"},
}

// rbacStillHeld returns the findings among checkable whose capability some
// subject of the patched file still holds, with the reason.
func rbacStillHeld(patched []byte, checkable []Violation) ([]Violation, []string) {
	p, ok := rbacPrivileges(patched)
	if !ok {
		return nil, nil
	}
	var held []Violation
	var why []string
	for _, c := range checkable {
		caps := rbacFindingCapabilities[c.ID]
		if len(caps) == 0 {
			continue
		}
	subjects:
		for _, k := range slices.Sorted(maps.Keys(p)) {
			for _, a := range sortedAtoms(p[k]) {
				for _, name := range caps {
					if rbacCapabilities[name](a) {
						held = append(held, c)
						why = append(why, fmt.Sprintf("%s: RBAC %s still holds %s (%s %s)", c.ID, k, name, a.verb, a.resource))
						break subjects
					}
				}
			}
		}
	}
	return held, why
}

func sortedAtoms(set map[rbacAtom]bool) []rbacAtom {
	return slices.SortedFunc(maps.Keys(set), func(a, b rbacAtom) int {
		return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
	})
}

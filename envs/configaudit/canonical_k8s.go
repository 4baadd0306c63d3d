package configaudit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/svbench/svbench/verify/yamlsafe"
)

// The scanners match spellings; Kubernetes acts on meanings. Before a
// patched manifest is re-verified it is rewritten into the one spelling the
// scanners recognise for what it means, so a patch that only rewords an
// exposure is judged as the exposure it still is:
//
//   - an image without tag or digest is `:latest`;
//   - an unset allowPrivilegeEscalation is true (the runtime's default);
//   - capability names are upper case without `CAP_`, and an added
//     capability of the escape class (escapeClass) adds SYS_ADMIN;
//   - a volume whose claim can bind a hostPath or local PersistentVolume of
//     the file is that hostPath (claimedHostPaths);
//   - host paths are cleaned (`//etc` is /etc), /run is /var/run, and a
//     directory above a sensitive path the original mounted mounts that path;
//   - a resource quantity that limits nothing (a limit as large as a whole
//     large node: 64 CPU cores or 256 GiB of memory, the size of an
//     m7i.16xlarge, n2-standard-64 or D64s v5; a memory limit 64 times its
//     request or more; a CPU request under 10m, a memory request under
//     4 MiB, an unparsable quantity) is unset. A
//     container limited to a whole node is limited by the node, not by its
//     limit: "255" cores or 1023Gi are the unset limit in other words;
//   - an environment value read through the downward API from the pod's own
//     annotations or labels, or from a ConfigMap in the same file, is the
//     literal value it resolves to (plaintext either way);
//   - a container that runs an SSH server keeps the port-22 declaration the
//     original made for it: removing a declaration stops no listener;
//   - a verb list that names every verb is `*`, and a ClusterRole that is
//     cluster-admin in effect (an aggregationRule that selects the default
//     roles, or wildcards everywhere) makes bindings to it bindings to
//     cluster-admin.
//
// Aliases and merge keys are expanded first so that none of the above can be
// hidden behind them.

const (
	maxMemoryLimit     = "256Gi"
	maxCPULimit        = "64"
	minCPURequest      = "10m"
	minMemoryRequest   = "4Mi"
	canonicalOpenAzure = "*"
)

var sshServer = regexp.MustCompile(`(?i)(sshd|openssh|dropbear|ssh-server|sshserver)`)

// canonicaliseK8s rewrites patched (see above) given the original; the
// notes say what was rewritten. A file that does not split is returned
// unchanged: the structure check refuses it.
func canonicaliseK8s(original, patched []byte) ([]byte, []string) {
	lim := yamlsafe.Limits{MaxBytes: MaxFixtureBytes}
	orig := map[string]*yaml.Node{}
	if docs, err := yamlsafe.Split("original.yaml", original, lim); err == nil {
		for _, d := range docs {
			if !d.Empty() {
				expandAliases(d.Node, 0)
				orig[objectKey(d.Node)] = d.Node
			}
		}
	}
	docs, err := yamlsafe.Split("patched.yaml", patched, lim)
	if err != nil {
		return patched, nil
	}
	var nodes []*yaml.Node
	for _, d := range docs {
		if !d.Empty() {
			nodes = append(nodes, d.Node)
		}
	}
	c := &k8sCanon{orig: orig, docs: nodes}
	changed := make([]bool, len(docs))
	for i, d := range docs {
		if d.Empty() {
			continue
		}
		if expandAliases(d.Node, 0) {
			changed[i] = true
		}
		if c.doc(d.Node) {
			changed[i] = true
		}
	}
	if c.rbac() {
		for i := range docs {
			changed[i] = changed[i] || c.rbacTouched[docs[i].Node]
		}
	}
	if len(c.notes) == 0 {
		return patched, nil
	}
	var out bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			out.WriteString("---\n")
		}
		raw := d.Raw
		if changed[i] {
			if r, err := renderYAML([]*yaml.Node{d.Node}); err == nil {
				raw = r
			}
		}
		out.Write(raw)
		if len(raw) > 0 && raw[len(raw)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), c.notes
}

type k8sCanon struct {
	orig        map[string]*yaml.Node
	docs        []*yaml.Node
	notes       []string
	rbacTouched map[*yaml.Node]bool
}

func (c *k8sCanon) note(obj, format string, args ...any) {
	c.notes = append(c.notes, obj+": "+fmt.Sprintf(format, args...))
}

// expandAliases replaces every alias by a copy of what it points to and
// applies merge keys, so each value is where a reader looks for it. yamlsafe
// has already bounded how far aliases expand.
func expandAliases(n *yaml.Node, depth int) bool {
	if n == nil || depth > 512 {
		return false
	}
	changed := false
	for i, ch := range n.Content {
		if ch.Kind == yaml.AliasNode && ch.Alias != nil {
			cp := deepCopy(ch.Alias, 0)
			cp.Anchor = ""
			n.Content[i] = cp
			changed = true
		}
		if n.Content[i].Anchor != "" {
			n.Content[i].Anchor = ""
			changed = true
		}
	}
	if n.Kind == yaml.MappingNode {
		var kept, merged []*yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" || (k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Style == 0) {
				srcs := []*yaml.Node{v}
				if v.Kind == yaml.SequenceNode {
					srcs = v.Content
				}
				for _, s := range srcs {
					if s.Kind == yaml.AliasNode && s.Alias != nil {
						s = s.Alias
					}
					if s.Kind == yaml.MappingNode {
						merged = append(merged, deepCopy(s, 0).Content...)
					}
				}
				changed = true
				continue
			}
			kept = append(kept, k, v)
		}
		for i := 0; i+1 < len(merged); i += 2 {
			if mget(&yaml.Node{Kind: yaml.MappingNode, Content: kept}, merged[i].Value) == nil {
				kept = append(kept, merged[i], merged[i+1])
			}
		}
		n.Content = kept
	}
	for _, ch := range n.Content {
		if expandAliases(ch, depth+1) {
			changed = true
		}
	}
	return changed
}

func deepCopy(n *yaml.Node, depth int) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil && depth < 512 {
		return deepCopy(n.Alias, depth+1)
	}
	cp := *n
	cp.Content = nil
	if depth < 512 {
		for _, ch := range n.Content {
			cp.Content = append(cp.Content, deepCopy(ch, depth+1))
		}
	}
	return &cp
}

func (c *k8sCanon) doc(d *yaml.Node) bool {
	spec := podSpec(d)
	if spec == nil {
		return false
	}
	obj := objectKey(d)
	origSpec := podSpec(c.orig[obj])
	changed := c.claimedHostPaths(obj, d, spec)
	if c.hostPaths(obj, spec, origSpec) {
		changed = true
	}
	origCtr := map[string]*yaml.Node{}
	for _, oc := range containers(origSpec, true) {
		origCtr[scalarValue(mget(oc, "name"))] = oc
	}
	for _, ctr := range containers(spec, true) {
		name := obj + " container " + scalarValue(mget(ctr, "name"))
		if c.container(name, d, ctr, origCtr[scalarValue(mget(ctr, "name"))]) {
			changed = true
		}
	}
	return changed
}

func (c *k8sCanon) container(name string, doc, ctr, orig *yaml.Node) bool {
	changed := false
	if img := mget(ctr, "image"); img != nil && img.Kind == yaml.ScalarNode && img.Value != "" && imageRepo(img.Value) == img.Value {
		c.note(name, "image %q has no tag: it is %s:latest", img.Value, img.Value)
		img.Value += ":latest"
		img.Style = 0
		changed = true
	}
	sc := mget(ctr, "securityContext")
	if sc == nil || sc.Kind == yaml.MappingNode {
		if mget(sc, "allowPrivilegeEscalation") == nil {
			sc = ensureMap(ctr, "securityContext")
			mset(sc, "allowPrivilegeEscalation", boolNode(true))
			if orig != nil && scalarValue(mpath(orig, "securityContext", "allowPrivilegeEscalation")) == "true" {
				c.note(name, "allowPrivilegeEscalation removed: the default is true")
			}
			changed = true
		}
		for _, list := range []string{"add", "drop"} {
			seq := mpath(sc, "capabilities", list)
			if seq == nil {
				continue
			}
			for _, x := range seq.Content {
				if x.Kind != yaml.ScalarNode {
					continue
				}
				canon := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(x.Value)), "CAP_")
				if canon != x.Value {
					c.note(name, "capability %q is %s", x.Value, canon)
					x.Value, x.Style = canon, 0
					changed = true
				}
			}
		}
	}
	if c.escapeCapabilities(name, mpath(ctr, "securityContext", "capabilities", "add")) {
		changed = true
	}
	if c.resources(name, ctr) {
		changed = true
	}
	if c.envValues(name, doc, ctr) {
		changed = true
	}
	if c.sshPort(name, ctr, orig) {
		changed = true
	}
	return changed
}

func (c *k8sCanon) resources(name string, ctr *yaml.Node) bool {
	res := mget(ctr, "resources")
	changed := false
	for _, b := range []struct{ section, res, bound string }{
		{"limits", "memory", maxMemoryLimit}, {"limits", "cpu", maxCPULimit},
		{"requests", "cpu", minCPURequest}, {"requests", "memory", minMemoryRequest},
	} {
		m := mget(res, b.section)
		v := mget(m, b.res)
		if v == nil {
			continue
		}
		q, err := resource.ParseQuantity(scalarValue(v))
		bound := resource.MustParse(b.bound)
		why := ""
		switch {
		case err != nil || v.Kind != yaml.ScalarNode:
			why = "is not a quantity"
		case b.section == "limits" && q.Cmp(bound) >= 0:
			why = "limits nothing (at least " + b.bound + ")"
		case b.section == "requests" && q.Cmp(bound) < 0:
			why = "reserves nothing (under " + b.bound + ")"
		}
		if why == "" && b.section == "limits" && b.res == "memory" {
			why = overcommitted(q, mget(mget(res, "requests"), "memory"))
		}
		if why == "" {
			continue
		}
		c.note(name, "%s.%s %q %s: unset", b.section, b.res, scalarValue(v), why)
		mdel(m, b.res)
		changed = true
	}
	return changed
}

// maxMemoryOvercommit bounds a memory limit by the request beside it. The
// request is what the scheduler reserves for the container (Kubernetes
// copies the limit into it when none is set); memory cannot be taken back
// from a running container except by killing one, so a limit far above the
// reservation protects the neighbours no more than no limit: a container
// that may use what 64 containers of its size were promised is limited by
// the node, not by its limit. Honest limits sit at 1–4 times their request
// (the corpus: 2).
const maxMemoryOvercommit = 64

// overcommitted says why a memory limit limits nothing beside its request
// ("" when it does): at least maxMemoryOvercommit times it.
func overcommitted(limit resource.Quantity, request *yaml.Node) string {
	if request == nil || request.Kind != yaml.ScalarNode {
		return ""
	}
	r, err := resource.ParseQuantity(request.Value)
	if err != nil || r.Sign() <= 0 {
		return ""
	}
	if limit.AsApproximateFloat64() >= maxMemoryOvercommit*r.AsApproximateFloat64() {
		return fmt.Sprintf("limits nothing (%d times the %s request or more)", maxMemoryOvercommit, request.Value)
	}
	return ""
}

var fieldRefKey = regexp.MustCompile(`^metadata\.(annotations|labels)\['([^']*)'\]$`)

// envValues resolves env values that come from the pod's own metadata or a
// ConfigMap in the same file into the literal they are.
func (c *k8sCanon) envValues(name string, doc, ctr *yaml.Node) bool {
	envs := mget(ctr, "env")
	if envs == nil || envs.Kind != yaml.SequenceNode {
		return false
	}
	meta := podMeta(doc)
	changed := false
	for _, e := range envs.Content {
		vf := mget(e, "valueFrom")
		if vf == nil {
			continue
		}
		val, src, ok := "", "", false
		if fp := scalarValue(mpath(vf, "fieldRef", "fieldPath")); fp != "" {
			if m := fieldRefKey.FindStringSubmatch(fp); m != nil {
				if v := mget(mget(meta, m[1]), m[2]); v != nil && v.Kind == yaml.ScalarNode {
					val, src, ok = v.Value, "the pod's "+m[1][:len(m[1])-1]+" "+m[2], true
				}
			}
		}
		if ref := mget(vf, "configMapKeyRef"); ref != nil {
			if v, found := c.configMapValue(scalarValue(mget(ref, "name")), scalarValue(mget(ref, "key"))); found {
				val, src, ok = v, "ConfigMap "+scalarValue(mget(ref, "name")), true
			}
		}
		if !ok {
			continue
		}
		c.note(name, "env %s is read from %s: a literal value", scalarValue(mget(e, "name")), src)
		mdel(e, "valueFrom")
		mset(e, "value", strNode(val))
		changed = true
	}
	return changed
}

func (c *k8sCanon) configMapValue(name, key string) (string, bool) {
	for _, d := range c.docs {
		if scalarValue(mget(d, "kind")) == "ConfigMap" && scalarValue(mpath(d, "metadata", "name")) == name {
			if v := mget(mget(d, "data"), key); v != nil && v.Kind == yaml.ScalarNode {
				return v.Value, true
			}
		}
	}
	return "", false
}

// podMeta is the metadata of the pod a workload runs, nil when absent.
func podMeta(doc *yaml.Node) *yaml.Node {
	switch scalarValue(mget(doc, "kind")) {
	case "Pod":
		return mget(doc, "metadata")
	case "CronJob":
		return mpath(doc, "spec", "jobTemplate", "spec", "template", "metadata")
	}
	return mpath(doc, "spec", "template", "metadata")
}

func (c *k8sCanon) sshPort(name string, ctr, orig *yaml.Node) bool {
	if orig == nil || !declaresPort(orig, "22") || declaresPort(ctr, "22") {
		return false
	}
	var runs []string
	for _, k := range []string{"image", "command", "args"} {
		n := mget(ctr, k)
		if n == nil {
			continue
		}
		if n.Kind == yaml.ScalarNode {
			runs = append(runs, n.Value)
		}
		for _, x := range n.Content {
			runs = append(runs, x.Value)
		}
	}
	if !sshServer.MatchString(strings.Join(runs, " ")) {
		return false
	}
	ports := mget(ctr, "ports")
	if ports == nil || ports.Kind != yaml.SequenceNode {
		ports = seqNode()
		mset(ctr, "ports", ports)
	}
	ports.Content = append(ports.Content, mapNode("name", "ssh", "containerPort", intNode(22)))
	c.note(name, "runs an SSH server: dropping the port-22 declaration stops no listener")
	return true
}

func declaresPort(ctr *yaml.Node, port string) bool {
	for _, p := range seqItems(mget(ctr, "ports")) {
		if scalarValue(mget(p, "containerPort")) == port {
			return true
		}
	}
	return false
}

// hostPaths cleans every hostPath and widens nothing: a directory above a
// sensitive path the original mounted is that sensitive path for the
// scanners.
func (c *k8sCanon) hostPaths(obj string, spec, origSpec *yaml.Node) bool {
	var origPaths []string
	{
		for _, v := range seqItems(mget(origSpec, "volumes")) {
			if p := scalarValue(mpath(v, "hostPath", "path")); p != "" {
				origPaths = append(origPaths, canonicalHostPath(p))
			}
		}
	}
	changed := false
	for _, v := range seqItems(mget(spec, "volumes")) {
		pn := mpath(v, "hostPath", "path")
		if pn == nil || pn.Kind != yaml.ScalarNode {
			continue
		}
		p := canonicalHostPath(pn.Value)
		for _, op := range origPaths {
			if p != op && strings.HasPrefix(op, strings.TrimSuffix(p, "/")+"/") && (sensitiveHostPath(op) || strings.HasSuffix(op, ".sock")) {
				c.note(obj, "hostPath %q contains %s, which the original mounted", pn.Value, op)
				p = op
				break
			}
		}
		if p != pn.Value {
			if !strings.Contains(strings.Join(c.notes, "\n"), fmt.Sprintf("hostPath %q", pn.Value)) {
				c.note(obj, "hostPath %q is %s", pn.Value, p)
			}
			pn.Value, pn.Style = p, 0
			changed = true
		}
	}
	return changed
}

// escapeClass are the capabilities that each let a container act on
// the node outside its own isolation, so swapping one for another removes
// nothing: SYS_ADMIN (mounts, cgroups, namespaces), SYS_MODULE (kernel
// modules), SYS_RAWIO (raw device and port I/O, /dev/mem), SYS_PTRACE
// (other processes, the host's with hostPID), SYS_BOOT (kexec a new
// kernel), DAC_READ_SEARCH (open_by_handle_at reads any host file: the
// "shocker" escape), BPF and PERFMON (kernel programs and tracing that
// read and write kernel memory), MAC_ADMIN and MAC_OVERRIDE (the AppArmor
// or SELinux confinement itself), and ALL, which holds them. The scanners
// know SYS_ADMIN (kube-linter's privilege-escalation-container reads only
// that name), so a container that adds any of the class adds SYS_ADMIN for
// them. NET_ADMIN is not in the class: it reconfigures the pod's own
// network namespace (the node's only with hostNetwork, which is its own
// finding), and svbench's OPA policy still reports it.
var escapeClass = map[string]bool{
	"SYS_ADMIN": true, "SYS_MODULE": true, "SYS_RAWIO": true, "SYS_PTRACE": true, "SYS_BOOT": true,
	"DAC_READ_SEARCH": true, "BPF": true, "PERFMON": true, "MAC_ADMIN": true, "MAC_OVERRIDE": true, "ALL": true,
}

// escapeCapabilities adds SYS_ADMIN to an add list that holds another
// capability of the escape class (names already canonical).
func (c *k8sCanon) escapeCapabilities(name string, add *yaml.Node) bool {
	var class []string
	for _, x := range seqItems(add) {
		if x.Kind != yaml.ScalarNode {
			continue
		}
		if x.Value == "SYS_ADMIN" {
			return false
		}
		if escapeClass[x.Value] {
			class = append(class, x.Value)
		}
	}
	if len(class) == 0 {
		return false
	}
	add.Content = append(add.Content, strNode("SYS_ADMIN"))
	c.note(name, "capabilities %s escape the container as SYS_ADMIN does: SYS_ADMIN", strings.Join(class, ", "))
	return true
}

// claimedHostPaths follows a pod's claims to the PersistentVolumes of the
// same file they can bind: a claim that can bind a hostPath (or local)
// volume mounts that host path, so the volume is written as the hostPath
// it is. Binding is judged as Kubernetes' static binder may decide it,
// failing closed where the file leaves it open: a claim's volumeName
// binds only that volume; a volume's claimRef reserves it for that claim;
// otherwise a claim binds a volume of its storage class (a claim without
// one may get the cluster's default class, whose name the file does not
// say, so it may bind any) whose labels its selector matches. Capacity and
// access modes are not compared. A StatefulSet's volumeClaimTemplates
// are claims named <template>-<set>-<ordinal>.
func (c *k8sCanon) claimedHostPaths(obj string, d, spec *yaml.Node) bool {
	ns := scalarValue(mpath(d, "metadata", "namespace"))
	changed := false
	for _, v := range seqItems(mget(spec, "volumes")) {
		var claimSpec *yaml.Node
		match := func(string) bool { return false }
		what := ""
		if pvc := mget(v, "persistentVolumeClaim"); pvc != nil {
			name := scalarValue(mget(pvc, "claimName"))
			claim := c.claim(name, ns)
			if claim == nil {
				continue
			}
			claimSpec, what = mget(claim, "spec"), "claim "+name
			match = func(ref string) bool { return ref == name }
		} else if tmpl := mpath(v, "ephemeral", "volumeClaimTemplate"); tmpl != nil {
			// The claim is named <pod>-<volume>; a workload's pods have
			// generated names, so any claimRef may be it.
			claimSpec, what = mget(tmpl, "spec"), "ephemeral claim "+scalarValue(mget(v, "name"))
			match = func(string) bool { return true }
		} else {
			continue
		}
		p, pv := c.boundHostPath(claimSpec, ns, match)
		if p == "" {
			continue
		}
		for _, k := range []string{"persistentVolumeClaim", "ephemeral"} {
			mdel(v, k)
		}
		mset(v, "hostPath", mapNode("path", p))
		c.note(obj, "volume %s: %s can bind PersistentVolume %s, the host path %s", scalarValue(mget(v, "name")), what, pv, p)
		changed = true
	}
	if scalarValue(mget(d, "kind")) != "StatefulSet" {
		return changed
	}
	set := scalarValue(mpath(d, "metadata", "name"))
	for _, t := range seqItems(mpath(d, "spec", "volumeClaimTemplates")) {
		name := scalarValue(mpath(t, "metadata", "name"))
		prefix := name + "-" + set + "-"
		p, pv := c.boundHostPath(mget(t, "spec"), ns, func(ref string) bool { return strings.HasPrefix(ref, prefix) })
		if p == "" {
			continue
		}
		vols := mget(spec, "volumes")
		if vols == nil || vols.Kind != yaml.SequenceNode {
			vols = seqNode()
			mset(spec, "volumes", vols)
		}
		vols.Content = append(vols.Content, mapNode("name", name, "hostPath", mapNode("path", p)))
		c.note(obj, "volumeClaimTemplate %s can bind PersistentVolume %s, the host path %s", name, pv, p)
		changed = true
	}
	return changed
}

// claim finds a PersistentVolumeClaim of the file by name in the pod's
// namespace (a missing namespace is the one the file is applied to).
func (c *k8sCanon) claim(name, ns string) *yaml.Node {
	for _, d := range c.docs {
		if scalarValue(mget(d, "kind")) != "PersistentVolumeClaim" || scalarValue(mpath(d, "metadata", "name")) != name {
			continue
		}
		if cns := scalarValue(mpath(d, "metadata", "namespace")); cns == "" || ns == "" || cns == ns {
			return d
		}
	}
	return nil
}

// boundHostPath is the host path of a hostPath or local PersistentVolume
// of the file that a claim with this spec may bind (a sensitive one first),
// and the volume's name; "" when none. claimRef tells whether a volume's
// claimRef names the claim.
func (c *k8sCanon) boundHostPath(claimSpec *yaml.Node, ns string, claimRef func(string) bool) (string, string) {
	volumeName := scalarValue(mget(claimSpec, "volumeName"))
	class, classSet := "", false
	if n := mget(claimSpec, "storageClassName"); n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		class, classSet = n.Value, true
	}
	best, bestPV := "", ""
	for _, d := range c.docs {
		if scalarValue(mget(d, "kind")) != "PersistentVolume" {
			continue
		}
		pv := scalarValue(mpath(d, "metadata", "name"))
		spec := mget(d, "spec")
		p := scalarValue(mpath(spec, "hostPath", "path"))
		if p == "" {
			p = scalarValue(mpath(spec, "local", "path"))
		}
		if p == "" {
			continue
		}
		switch ref := mget(spec, "claimRef"); {
		case volumeName != "":
			if pv != volumeName {
				continue
			}
		case ref != nil:
			rns := scalarValue(mget(ref, "namespace"))
			if !claimRef(scalarValue(mget(ref, "name"))) || (rns != "" && ns != "" && rns != ns) {
				continue
			}
		default:
			if classSet && scalarValue(mget(spec, "storageClassName")) != class {
				continue
			}
			if !selectorMatches(mget(claimSpec, "selector"), mpath(d, "metadata", "labels")) {
				continue
			}
		}
		if best == "" || (!sensitiveMount(best) && sensitiveMount(p)) {
			best, bestPV = p, pv
		}
	}
	return best, bestPV
}

func sensitiveMount(p string) bool {
	p = canonicalHostPath(p)
	return sensitiveHostPath(p) || strings.HasSuffix(p, ".sock")
}

// selectorMatches reports whether a claim's label selector may select a
// volume's labels; a selector that cannot be read may (fail closed).
func selectorMatches(selector, lbls *yaml.Node) bool {
	if selector == nil {
		return true
	}
	v, err := yamlsafe.Value(selector)
	if err != nil {
		return true
	}
	b, _ := json.Marshal(v)
	var ls metav1.LabelSelector
	if json.Unmarshal(b, &ls) != nil {
		return true
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return true
	}
	set := labels.Set{}
	for i := 0; lbls != nil && lbls.Kind == yaml.MappingNode && i+1 < len(lbls.Content); i += 2 {
		set[lbls.Content[i].Value] = lbls.Content[i+1].Value
	}
	return sel.Matches(set)
}

// procRoot is the host's root seen through a process's /proc entry.
var procRoot = regexp.MustCompile(`^/proc/(\d+|self|thread-self)/root(/|$)`)

func canonicalHostPath(p string) string {
	p = path.Clean("/" + strings.TrimSpace(p))
	for procRoot.MatchString(p) {
		p = path.Clean("/" + procRoot.ReplaceAllString(p, ""))
	}
	if p == "/run" || strings.HasPrefix(p, "/run/") {
		p = "/var" + p
	}
	return p
}

// The verbs Kubernetes' authoriser knows for resources; a rule naming all
// the standard ones is `*` for every purpose that matters here.
var everyVerb = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}

// rbac canonicalises verb lists and points bindings at cluster-admin when
// the role they name is cluster-admin in effect.
func (c *k8sCanon) rbac() bool {
	c.rbacTouched = map[*yaml.Node]bool{}
	superRoles := map[string]bool{}
	for _, d := range c.docs {
		kind := scalarValue(mget(d, "kind"))
		if kind != "Role" && kind != "ClusterRole" {
			continue
		}
		obj := objectKey(d)
		wildAll := false
		for _, r := range seqItems(mget(d, "rules")) {
			verbs := mget(r, "verbs")
			var vs []string
			for _, v := range seqItems(verbs) {
				vs = append(vs, strings.ToLower(v.Value))
			}
			if verbs != nil && !slices.Contains(vs, "*") && containsAll(vs, everyVerb) {
				c.note(obj, "verbs %v name every verb: *", vs)
				mset(r, "verbs", flowSeq("*"))
				c.rbacTouched[d] = true
				vs = []string{"*"}
			}
			if slices.Contains(vs, "*") && seqHas(mget(r, "resources"), "*") && seqHas(mget(r, "apiGroups"), "*") {
				wildAll = true
			}
		}
		if kind != "ClusterRole" {
			continue
		}
		name := scalarValue(mpath(d, "metadata", "name"))
		if wildAll {
			superRoles[name] = true
		}
		if sel := mpath(d, "aggregationRule", "clusterRoleSelectors"); sel != nil && aggregatesClusterAdmin(sel) {
			c.note(obj, "its aggregationRule selects the default roles, cluster-admin included")
			superRoles[name] = true
		}
	}
	delete(superRoles, "cluster-admin")
	for _, d := range c.docs {
		kind := scalarValue(mget(d, "kind"))
		if kind != "ClusterRoleBinding" && kind != "RoleBinding" {
			continue
		}
		ref := mget(d, "roleRef")
		if scalarValue(mget(ref, "kind")) != "ClusterRole" || !superRoles[scalarValue(mget(ref, "name"))] {
			continue
		}
		c.note(objectKey(d), "binds ClusterRole %s, which is cluster-admin in effect", scalarValue(mget(ref, "name")))
		mset(ref, "name", strNode("cluster-admin"))
		c.rbacTouched[d] = true
	}
	return len(c.rbacTouched) > 0
}

// clusterAdminLabels are the labels the API server's bootstrap gives
// cluster-admin.
var clusterAdminLabels = labels.Set{"kubernetes.io/bootstrapping": "rbac-defaults"}

func aggregatesClusterAdmin(selectors *yaml.Node) bool {
	for _, s := range seqItems(selectors) {
		v, err := yamlsafe.Value(s)
		if err != nil {
			return true // a selector that cannot be read cannot be shown to exclude it
		}
		b, _ := json.Marshal(v)
		var ls metav1.LabelSelector
		if err := json.Unmarshal(b, &ls); err != nil {
			return true
		}
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			return true
		}
		if sel.Matches(clusterAdminLabels) {
			return true
		}
	}
	return false
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// seqItems is a sequence's items; nil for anything else.
func seqItems(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func seqHas(seq *yaml.Node, v string) bool {
	for _, x := range seqItems(seq) {
		if x.Value == v {
			return true
		}
	}
	return false
}

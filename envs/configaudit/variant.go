package configaudit

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Baseline variation: the generator renames what a real repository would
// name differently (applications, namespaces, teams, registries, clusters,
// buckets, regions, instance types) so one secure baseline yields thousands
// of distinct files. A variation is applied after the mutations, renames
// whole words only, and never touches what a mutation or a verifier looks at
// (security settings, CIDRs, ports, versions of the mutated lines); the
// generator confirms that with the verifiers on every row it writes.
//
// A slot is one dimension of variation: a set of tokens (whole words of the
// text) and, for each option, what every token becomes. Options of a slot
// differ for every token even after integrity.Normalise (case folded,
// digits collapsed), so two different choices give two rows that are not
// near-duplicates of each other. Slots whose options differ only in digits
// (image tags, account ids) are cosmetic: they add realism, not distinctness,
// and are drawn at random instead of being counted.
type slot struct {
	name     string
	tokens   []string
	options  [][]string // options[i][t] replaces tokens[t]
	cosmetic bool
}

func (s slot) size() int { return len(s.options) }

// words makes a single-token slot.
func words(name, token string, opts ...string) slot {
	s := slot{name: name, tokens: []string{token}}
	for _, o := range opts {
		s.options = append(s.options, []string{o})
	}
	return s
}

// derived makes a slot whose tokens are all forms of one word (label,
// Title, snake_case compound …): forms[t](word) replaces tokens[t].
func derived(name string, pool []string, tokens []string, forms ...func(string) string) slot {
	s := slot{name: name, tokens: tokens}
	for _, w := range pool {
		opt := make([]string, len(tokens))
		for t := range tokens {
			opt[t] = forms[t](w)
		}
		s.options = append(s.options, opt)
	}
	return s
}

func same(w string) string  { return w }
func title(w string) string { return strings.ToUpper(w[:1]) + w[1:] }
func suffix(sfx string) func(string) string {
	return func(w string) string { return w + sfx }
}

// Pools. Entries are lower-case words without digits unless a slot needs
// them (regions, machine types), and distinct after normalisation.
var (
	appPool = []string{"payments", "inventory", "billing", "search", "catalog", "cart", "invoicing", "shipping",
		"pricing", "ledger", "notifications", "profiles", "recommendations", "reviews", "gateway", "ingestor",
		"scheduler", "reporting", "mailer", "thumbnailer", "geocoder", "fraud-check", "loyalty", "quotes",
		"returns", "subscriptions", "warehouse", "tracking", "dispatcher", "ratings", "coupons", "media",
		"exporter", "importer", "webhooks", "audit-trail", "forecasting", "feeds", "storefront-api", "orders-api"}
	rolePool = []string{"config-reader", "pod-viewer", "lease-editor", "endpoint-watcher", "metrics-reader",
		"job-runner", "deploy-bot", "event-reader", "configmap-editor", "ingress-viewer", "node-observer",
		"status-reporter", "log-reader", "quota-viewer", "autoscaler-editor", "crd-reader"}
	namespacePool = []string{"prod", "staging", "qa", "retail", "commerce", "backoffice", "fintech",
		"data-platform", "ops", "edge", "internal", "partners", "marketing", "support", "core", "sandbox",
		"europe", "americas", "apac", "team-alpha", "team-bravo", "team-charlie", "apps", "services"}
	teamPool = []string{"checkout-team", "sre", "platform-eng", "data-eng", "growth", "core-infra", "mobile",
		"web-frontend", "billing-team", "security", "ml-ops", "devex", "search-team", "logistics",
		"finance-eng", "observability-team"}
	// registryPool holds private registries only: svbench's policy trusts
	// none of them, like the baselines' registry.example.com, so a variant
	// does not change what OPA reports.
	registryPool = []string{"registry.example.com", "harbor.corp.example", "artifacts.internal.example.net",
		"docker.acme-corp.example", "cr.example.org", "images.build.example.io"}
	companyPool = []string{"acme", "globex", "initech", "umbrella", "hooli", "vandelay", "wonka", "stark",
		"wayne", "tyrell", "cyberdyne", "soylent"}
	subjectPool = []string{"reports", "invoices", "exports", "backups", "images", "archives", "telemetry",
		"uploads", "receipts", "statements", "documents", "snapshots", "datasets", "contracts", "payroll",
		"manifests", "artifacts", "releases", "videos", "models", "orders", "tickets", "claims", "events"}
	awsRegions = []string{"eu-west-1", "eu-central-1", "eu-north-1", "us-east-1", "us-west-2", "ca-central-1",
		"sa-east-1", "ap-southeast-2", "ap-northeast-1", "ap-south-1", "me-south-1", "af-south-1"}
	azureRegions = []string{"westeurope", "northeurope", "eastus", "westus", "uksouth", "francecentral",
		"germanywestcentral", "swedencentral", "japaneast", "australiaeast"}
	gcpRegions = []string{"europe-west1", "europe-north1", "us-central1", "asia-northeast1", "asia-southeast1",
		"australia-southeast1", "southamerica-east1", "northamerica-northeast1", "me-west1", "africa-south1"}
)

// teamPlaceholder is the team label value inserted into every Kubernetes
// baseline before variation; the team slot always replaces it.
const teamPlaceholder = "svbench-team"

// k8sSlots derives the slots of a Kubernetes baseline from its first
// document: its name (an application, or a role for RBAC), its namespace,
// the team label and the image registry.
func k8sSlots(docs []*yaml.Node, content string) []slot {
	var out []slot
	if len(docs) == 0 {
		return nil
	}
	first := docs[0]
	if name := scalarValue(mpath(first, "metadata", "name")); name != "" {
		pool := appPool
		if k := scalarValue(mget(first, "kind")); k == "Role" || k == "ClusterRole" {
			pool = rolePool
		}
		out = append(out, words("name", name, pool...))
	}
	if ns := firstNamespace(docs); ns != "" {
		out = append(out, words("namespace", ns, namespacePool...))
	}
	out = append(out, words("team", teamPlaceholder, teamPool...))
	if strings.Contains(content, "registry.example.com/") {
		out = append(out, words("registry", "registry.example.com", registryPool...))
	}
	for _, tag := range imageTags(docs) {
		out = append(out, versionSlot(tag))
	}
	return out
}

func firstNamespace(docs []*yaml.Node) string {
	for _, d := range docs {
		if ns := scalarValue(mpath(d, "metadata", "namespace")); ns != "" {
			return ns
		}
		if subs := mget(d, "subjects"); subs != nil {
			for _, s := range subs.Content {
				if ns := scalarValue(mget(s, "namespace")); ns != "" {
					return ns
				}
			}
		}
	}
	return ""
}

// imageTags are the distinct version tags of the workload images.
func imageTags(docs []*yaml.Node) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range docs {
		spec := podSpec(d)
		for _, c := range containers(spec, true) {
			img := scalarValue(mget(c, "image"))
			repo := imageRepo(img)
			if len(img) > len(repo)+1 && img[len(repo)] == ':' {
				if tag := img[len(repo)+1:]; tag != "latest" && !seen[tag] {
					seen[tag] = true
					out = append(out, tag)
				}
			}
		}
	}
	return out
}

// versionSlot is a cosmetic slot: a semantic version differs from another
// only in digits.
func versionSlot(tag string) slot {
	s := slot{name: "version " + tag, tokens: []string{tag}, cosmetic: true}
	for major := 1; major <= 6; major++ {
		for minor := 0; minor < 20; minor += 3 {
			s.options = append(s.options, []string{fmt.Sprintf("%d.%d.%d", major, minor, (major*7+minor)%10)})
		}
	}
	return s
}

// digitsSlot is a cosmetic slot for an all-digit token (account ids).
func digitsSlot(name, token string) slot {
	s := slot{name: name, tokens: []string{token}, cosmetic: true}
	for i := 0; i < 16; i++ {
		var b strings.Builder
		for j := 0; j < len(token); j++ {
			b.WriteByte(byte('1' + (i*7+j*3)%9))
		}
		s.options = append(s.options, []string{b.String()})
	}
	return s
}

func regionSlot(name string, regions []string, tokens []string, forms ...func(string) string) slot {
	return derived(name, regions, tokens, forms...)
}

// tfSlots are the Terraform baselines' slots, by baseline name. Every token
// is a whole word of the baseline outside the lines the mutations rewrite.
var tfSlots = map[string][]slot{
	"tf/aws_ec2": {
		words("role", "worker", "worker", "runner", "builder", "indexer", "crawler", "renderer", "transcoder",
			"ingest", "etl", "compactor", "agent", "executor", "poller", "sync", "backfill", "scanner"),
		words("purpose", "batch", "batch", "build", "nightly", "media", "report", "search", "ci", "ml",
			"analytics", "queue", "cron", "import"),
		words("volume", "scratch", "scratch", "cache", "spool", "buffer", "workspace", "staging", "tmpdata", "artifacts"),
		regionSlot("region", awsRegions, []string{"eu-west-1a", "eu-west-1"}, suffix("a"), same),
		words("instance type", "t3.medium", "t3.medium", "m6i.large", "c6i.xlarge", "r6i.large", "m5.xlarge", "t3a.small"),
		digitsSlot("account", "111122223333"),
	},
	"tf/aws_eks": {
		words("cluster", "platform", "platform", "prod-eu", "core", "apps", "shared-services", "data-plane",
			"edge-cluster", "ml-cluster", "staging-cluster", "internal-tools", "customer-api", "batch-jobs",
			"analytics", "payments-cluster", "gaming", "iot-backend"),
		words("role", "eks-cluster", "eks-cluster", "eks-control-plane", "cluster-service-role", "k8s-masters",
			"eks-admin-role", "platform-eks", "eks-service", "kube-cluster-role"),
		words("description", "EKS secrets encryption key", "EKS secrets encryption key",
			"Kubernetes secrets envelope key", "Cluster secrets KMS key", "Envelope encryption for cluster secrets",
			"CMK for EKS secrets", "Secrets encryption key for the cluster"),
		digitsSlot("account", "111122223333"),
	},
	"tf/aws_iam": {
		words("company", "acme", companyPool...),
		derived("subject", subjectPool, []string{"reports", "reports_reader", "ReadReports"},
			same, suffix("_reader"), func(w string) string { return "Read" + title(w) }),
		slot{name: "service", tokens: []string{"assume_ec2", "ec2"}, options: [][]string{
			{"assume_ec2", "ec2"}, {"assume_lambda", "lambda"}, {"assume_ecs_tasks", "ecs-tasks"},
			{"assume_batch", "batch"}, {"assume_glue", "glue"}, {"assume_codebuild", "codebuild"}}},
	},
	"tf/aws_rds": {
		derived("subject", subjectPool, []string{"orders", "orders_admin", "Orders"}, same, suffix("_admin"), title),
		words("subnet group", "private-db", "private-db", "db-private", "data-subnets", "rds-private",
			"backend-db", "isolated-db", "db-tier", "persistence"),
		words("instance class", "db.t4g.medium", "db.t4g.medium", "db.r6g.large", "db.m6g.xlarge",
			"db.t3.small", "db.r5.2xlarge", "db.m5d.large", "db.x2g.large", "db.c6gd.medium"),
	},
	"tf/aws_s3": {
		words("company", "acme", companyPool...),
		derived("subject", subjectPool, []string{"artifacts", "Artifacts"}, same, title),
		words("purpose", "build", "build", "ci", "prod", "shared", "team", "release", "nightly", "ml",
			"legacy", "regional", "partner", "customer"),
	},
	"tf/aws_security_group": {
		words("name", "bastion", "bastion", "jump", "admin-access", "vpn-gateway", "ops-access",
			"remote-admin", "maintenance", "support-access", "mgmt", "jumpbox", "breakglass", "devops-entry"),
		words("host", "Bastion host", "Bastion host", "Jump host", "Admin workstation", "Maintenance host",
			"Support desk", "Ops console"),
		words("network", "VPN", "VPN", "office", "ZTNA", "management", "SRE", "on-call", "datacenter", "partner"),
		words("proxy", "proxy", "proxy", "gateway", "egress gateway", "NAT instance", "mirror", "package cache"),
	},
	"tf/azure_compute": {
		words("host", "jump", "jump", "bastion", "admin", "build", "ci", "mgmt", "relay", "gateway", "runner",
			"tools", "deploy", "console"),
		words("resource group", "rg-ops", "rg-ops", "rg-platform", "rg-shared", "rg-prod-weu", "rg-infra",
			"rg-core", "rg-data", "rg-devops", "rg-security", "rg-web", "rg-batch", "rg-tools"),
		regionSlot("region", azureRegions, []string{"westeurope"}, same),
		words("admin user", "opsadmin", "opsadmin", "azureuser", "sysadmin", "deployer", "operator",
			"devops", "maint", "cloudadmin"),
	},
	"tf/azure_storage": {
		words("account", "acmeauditlogs", "acmeauditlogs", "globexlogs", "initechaudit", "umbrellastore",
			"hoolidata", "vandelayarchive", "wonkablobs", "starkrecords", "wayneevents", "tyrellvault",
			"cyberdynelogs", "soylentfiles"),
		derived("subject", []string{"audit", "billing", "telemetry", "backups", "exports", "invoices", "media",
			"reports", "archive", "uploads", "events", "snapshots"}, []string{"audit"}, same),
		regionSlot("region", azureRegions, []string{"westeurope"}, same),
	},
	"tf/gcp_compute": {
		derived("role", []string{"app", "api", "web", "worker", "batch", "render", "search", "cache", "queue",
			"ingest", "admin", "report"}, []string{"app", "app_https"}, same, suffix("_https")),
		regionSlot("region", gcpRegions, []string{"europe-west1-b", "europe-west1"}, suffix("-b"), same),
		words("company", "acme", companyPool...),
		words("machine type", "e2-standard-2", "e2-standard-2", "n2-standard-4", "c2-standard-8",
			"n2d-highmem-2", "e2-highcpu-4", "t2d-standard-1"),
	},
	"tf/gcp_storage": {
		derived("subject", subjectPool, []string{"exports", "exports_reader"}, same, suffix("_reader")),
		words("company", "acme", companyPool...),
		words("group", "analysts", "analysts", "data-science", "finance", "auditors", "bi-team", "support",
			"marketing", "partners"),
		slot{name: "location", tokens: []string{"EU", "eu"}, options: [][]string{{"EU", "eu"}, {"US", "us"}, {"ASIA", "asia"}}},
	},
}

// isWordByte reports the bytes a token cannot be glued to: letters, digits
// and underscore ("checkout" is a word of "checkout-db" and
// "payments.shop.svc", not of "checkout_db").
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// replacer substitutes whole-word tokens in one left-to-right pass, longest
// token first at each position, so replacements never chain and a compound
// ("acme-build-artifacts") is renamed word by word.
type replacer struct {
	byFirst [256][]string // tokens by first byte, longest first
}

func newReplacer(tokens []string) *replacer {
	r := &replacer{}
	seen := map[string]bool{}
	for _, t := range tokens {
		if seen[t] || t == "" {
			continue
		}
		seen[t] = true
		r.byFirst[t[0]] = append(r.byFirst[t[0]], t)
	}
	for i := range r.byFirst {
		sort.SliceStable(r.byFirst[i], func(a, b int) bool { return len(r.byFirst[i][a]) > len(r.byFirst[i][b]) })
	}
	return r
}

// scan calls emit for each literal stretch and each token match.
func (r *replacer) scan(s string, emit func(lit string, token string)) {
	start := 0
	for i := 0; i < len(s); {
		if i > 0 && isWordByte(s[i-1]) && isWordByte(s[i]) {
			i++
			continue
		}
		matched := ""
		for _, t := range r.byFirst[s[i]] {
			if strings.HasPrefix(s[i:], t) {
				end := i + len(t)
				if end < len(s) && isWordByte(s[end]) && isWordByte(t[len(t)-1]) {
					continue
				}
				matched = t
				break
			}
		}
		if matched == "" {
			i++
			continue
		}
		emit(s[start:i], matched)
		i += len(matched)
		start = i
	}
	emit(s[start:], "")
}

// present lists the tokens that occur as whole words in s.
func (r *replacer) present(s string) map[string]bool {
	out := map[string]bool{}
	r.scan(s, func(_, tok string) {
		if tok != "" {
			out[tok] = true
		}
	})
	return out
}

// replace substitutes every occurrence.
func (r *replacer) replace(s string, with map[string]string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	r.scan(s, func(lit, tok string) {
		b.WriteString(lit)
		if tok != "" {
			b.WriteString(with[tok])
		}
	})
	return b.String()
}

// variation is the variant space of one baseline.
type variation struct {
	slots []slot
	rep   *replacer
}

func newVariation(slots []slot) *variation {
	var toks []string
	for _, s := range slots {
		toks = append(toks, s.tokens...)
	}
	return &variation{slots: slots, rep: newReplacer(toks)}
}

// counted returns the indices of the slots that make two texts differ after
// normalisation in content: non-cosmetic slots with a token present.
func (v *variation) counted(content string) []int {
	present := v.rep.present(content)
	var out []int
	for i, s := range v.slots {
		if s.cosmetic {
			continue
		}
		for _, t := range s.tokens {
			if present[t] {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// size is the number of distinct variants of content: the product of the
// counted slots' sizes.
func (v *variation) size(counted []int) int {
	n := 1
	for _, i := range counted {
		n *= v.slots[i].size()
	}
	return n
}

// apply renders variant idx (a mixed-radix number over the counted slots);
// the other slots take options drawn from rng.
func (v *variation) apply(content string, counted []int, idx int, rng *rand.Rand) string {
	choice := make([]int, len(v.slots))
	for i, s := range v.slots {
		choice[i] = rng.IntN(s.size())
	}
	for _, i := range counted {
		n := v.slots[i].size()
		choice[i] = idx % n
		idx /= n
	}
	with := map[string]string{}
	for i, s := range v.slots {
		for t, tok := range s.tokens {
			if _, done := with[tok]; !done {
				with[tok] = s.options[choice[i]][t]
			}
		}
	}
	return v.rep.replace(content, with)
}

// withTeamLabel adds the team placeholder label to the first document.
func withTeamLabel(docs []*yaml.Node) {
	if len(docs) == 0 {
		return
	}
	md := ensureMap(docs[0], "metadata")
	labels := ensureMap(md, "labels")
	mset(labels, "team", strNode(teamPlaceholder))
}

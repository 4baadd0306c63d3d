package configaudit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

// dataCommands are E2's dataset pipelines in its registration: `svbench
// data generate e2` (secure baselines with injected, labelled
// misconfigurations) and `svbench data build e2` (your own manifests and
// Terraform, labelled by the verifiers).
func dataCommands() []env.DataCommand {
	return []env.DataCommand{generateCommand(), buildCommand()}
}

var splitRatios = [3]float64{0.7, 0.15, 0.15}

// userText is the prompt text data validate compares for leakage: the user
// messages.
func userText(ex env.Example) string {
	var parts []string
	for _, m := range ex.Prompt {
		if m.Role == env.RoleUser {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(parts, "\n")
}

// writeSplits writes train/dev/test plus the card. Rows are split by
// group, stratified by fixture type × number of mutations: every row of a group
// (a generated row's baseline and mutation set, see Row.GroupKey) lands in
// one split, and so does every row whose prompt equals another's once case,
// digits and whitespace are normalised, the comparison `data validate` makes
// for leakage. Exact and near leakage between splits are therefore zero by
// construction.
func writeSplits(out string, rows []Row, seed uint64, card *dataset.Card) (map[string]int, int, error) {
	strata := make([]string, len(rows))
	splitStrata := make([]string, len(rows))
	labels := map[string]int{}
	for i, r := range rows {
		strata[i] = r.StratumKey()
		labels[strata[i]]++
		// Splitting also by the number of mutations keeps groups of one
		// size together (single-mutation groups are the largest), so every
		// split gets the same mix of simple and composed rows.
		splitStrata[i] = fmt.Sprintf("%s/%d", strata[i], len(r.Labels.Mutations))
	}
	e, err := NewEnv(env.Options{})
	if err != nil {
		return nil, 0, err
	}
	keys := make([][]string, len(rows))
	for i, r := range rows {
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, 0, err
		}
		ex, err := e.ParseExample(raw)
		if err != nil {
			return nil, 0, fmt.Errorf("row %s: %w", r.ID, err)
		}
		near := sha256.Sum256([]byte(integrity.Normalise(userText(ex))))
		keys[i] = []string{"group:" + r.GroupKey(), "near:" + hex.EncodeToString(near[:])}
	}
	split, groups := groupedSplit(splitStrata, keys, splitRatios, seed)
	splits := map[string][]any{}
	counts := map[string]int{}
	bySplit := map[string]map[string]int{}
	for name, idx := range split.Sets() {
		bySplit[name] = map[string]int{}
		for _, i := range idx {
			splits[name] = append(splits[name], rows[i])
			bySplit[name][strata[i]]++
		}
		counts[name] = len(idx)
	}
	card.Counts.Labels = labels
	card.Counts.LabelsBySplit = bySplit
	if err := dataset.WriteSplits(out, splits, card); err != nil {
		return nil, 0, fmt.Errorf("write %s: %w", out, err)
	}
	return counts, groups, nil
}

// groupedSplit divides rows into train/dev/test keeping connected rows
// together: rows sharing any key are one unit, whose stratum is its first
// row's. Units are placed largest first, ties in an order seeded by the
// unit's first key, each into the split furthest below its target row
// counts, relative to them (the stratum's plus the whole set's). It returns
// the split and the number of units.
func groupedSplit(strata []string, keys [][]string, ratios [3]float64, seed uint64) (dataset.Split, int) {
	n := len(strata)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := map[string]int{}
	for i, ks := range keys {
		for _, k := range ks {
			if j, ok := owner[k]; ok {
				if a, b := find(i), find(j); a != b {
					parent[max(a, b)] = min(a, b)
				}
			} else {
				owner[k] = i
			}
		}
	}
	type unit struct {
		rows []int
		tie  uint64
	}
	units := map[int]*unit{}
	byStratum := map[string][]*unit{}
	var names []string
	for i := range strata {
		r := find(i)
		u := units[r]
		if u == nil {
			u = &unit{tie: dataset.HashKey64("e2-group", strconv.FormatUint(seed, 10), keys[r][0])}
			units[r] = u
			s := strata[r]
			if _, ok := byStratum[s]; !ok {
				names = append(names, s)
			}
			byStratum[s] = append(byStratum[s], u)
		}
		u.rows = append(u.rows, i)
	}
	slices.Sort(names)
	total := ratios[0] + ratios[1] + ratios[2]
	targets := func(rows int) (t [3]float64) {
		for j := range t {
			t[j] = float64(rows) * ratios[j] / total
		}
		return t
	}
	// Largest first (ties in seeded order), each unit to the split furthest
	// below its targets, relative to them: the stratum's and the whole
	// set's, so a small set of many tiny strata still gets dev and test rows.
	type placed struct {
		u       *unit
		stratum int
	}
	var all []placed
	stratumTarget := make([][3]float64, len(names))
	stratumCur := make([][3]float64, len(names))
	for si, s := range names {
		size := 0
		for _, u := range byStratum[s] {
			size += len(u.rows)
			all = append(all, placed{u, si})
		}
		stratumTarget[si] = targets(size)
	}
	sort.SliceStable(all, func(a, b int) bool {
		if len(all[a].u.rows) != len(all[b].u.rows) {
			return len(all[a].u.rows) > len(all[b].u.rows)
		}
		return all[a].u.tie < all[b].u.tie
	})
	globalTarget := targets(n)
	var globalCur [3]float64
	var sets [3][]int
	for _, p := range all {
		best, bestGap := 0, math.Inf(-1)
		for j := 0; j < 3; j++ {
			if ratios[j] <= 0 {
				continue
			}
			// Relative gaps, so the whole set's targets (large) do not
			// drown the stratum's (small).
			gap := 1 - stratumCur[p.stratum][j]/stratumTarget[p.stratum][j] + 1 - globalCur[j]/globalTarget[j]
			if gap > bestGap {
				best, bestGap = j, gap
			}
		}
		k := float64(len(p.u.rows))
		stratumCur[p.stratum][best] += k
		globalCur[best] += k
		sets[best] = append(sets[best], p.u.rows...)
	}
	for j := range sets {
		slices.Sort(sets[j])
	}
	return dataset.Split{Train: sets[0], Dev: sets[1], Test: sets[2]}, len(units)
}

func generateCommand() env.DataCommand {
	return env.DataCommand{
		Kind:  env.DataGenerate,
		Short: "Generate E2 rows: secure Kubernetes/Terraform baselines with injected, labelled misconfigurations",
		Long: `Takes svbench's embedded secure baselines (Kubernetes workloads, Services, Ingress, RBAC,
NetworkPolicy; Terraform for AWS, GCP and Azure), renames what real repositories name
differently (applications, namespaces, teams, registries, buckets, clusters, regions, instance
types) and composes 1..--max-mutations named misconfigurations per row (privileged, hostNetwork,
root user, latest tag, public S3, 0.0.0.0/0 SSH, …). Labels are the mutations and the finding
ids they map to; every row is then scanned by kube-linter or trivy, and OPA, which must report
exactly those of the catalogue's ids, or the row is replaced. Some rows stay clean.

Rows are distinct even up to case, digits and whitespace. Splits (70/15/15, stratified by
fixture type and clean/findings) keep every baseline+mutation-set group in one split, so
` + "`svbench data validate`" + ` finds no duplicates and no leakage. Asking for more rows than the
generator can make distinct fails and names the maximum.

--tf-share and --clean-share are taken literally: --tf-share 0 writes Kubernetes rows only,
1 Terraform rows only. Writes train/dev/test.jsonl, card.json and README.md. The same
options give the same bytes. Expect about 10 s per 1,000 Terraform rows per core (trivy).`,
		Example: `  svbench data generate e2 --n 2000 --seed 7 --out data/e2
  svbench data generate e2 --n 500 --tf-share 0 --out data/e2-k8s      # Kubernetes only`,
		Flags: func(f *pflag.FlagSet) env.DataRunner {
			n := f.Int("n", 1000, "rows to generate")
			seed := f.Uint64("seed", 1, "generator and split seed")
			out := f.String("out", "", "output directory")
			tfShare := f.Float64("tf-share", DefaultTFShare, "share of Terraform rows in [0, 1] (0: Kubernetes only, 1: Terraform only)")
			cleanShare := f.Float64("clean-share", DefaultCleanShare, "share of clean (unmutated) rows in [0, 1]")
			maxMutation := f.Int("max-mutations", DefaultMaxMutations, fmt.Sprintf("most mutations composed into one row, 1..%d", MaxMutationsLimit))
			return func(ctx context.Context, _ []string, dw env.DataIO) error {
				if *out == "" {
					return env.Usagef("--out is required: the directory to write the splits to")
				}
				if *n <= 0 {
					return env.Usagef("--n must be positive, got %d", *n)
				}
				if !(*tfShare >= 0 && *tfShare <= 1) {
					return env.Usagef("--tf-share must be in [0, 1] (0: Kubernetes only, 1: Terraform only), got %v", *tfShare)
				}
				if !(*cleanShare >= 0 && *cleanShare <= 1) {
					return env.Usagef("--clean-share must be in [0, 1], got %v", *cleanShare)
				}
				if *maxMutation < 1 || *maxMutation > MaxMutationsLimit {
					return env.Usagef("--max-mutations must be in [1, %d], got %d", MaxMutationsLimit, *maxMutation)
				}
				opts := GenOptions{N: *n, Seed: *seed, TFShare: *tfShare, CleanShare: *cleanShare, MaxMutations: *maxMutation}
				// Too many rows is a usage error, found before the verifiers load.
				var ce *CapacityError
				if _, err := Capacity(opts); errors.As(err, &ce) {
					return env.Usagef("--n %d: %v; lower --n, or change --tf-share, --clean-share or --max-mutations", *n, err)
				} else if err != nil {
					return err
				}
				e, err := NewEnv(env.Options{})
				if err != nil {
					return err
				}
				rows, st, err := e.Generate(ctx, opts)
				if err != nil {
					return err
				}
				card := &dataset.Card{
					Name: "e2-generated", Env: ID, Version: Version, Created: time.Now().UTC(), Seed: *seed,
					Generator: &dataset.Producer{Name: "configaudit.Generate", Version: Version, Params: map[string]any{
						"n": *n, "tf_share": *tfShare, "clean_share": *cleanShare, "max_mutations": *maxMutation, "max_n": st.MaxN}},
					Licence: "Apache-2.0 (svbench's own corpus)",
					Dedup: &dataset.Dedup{Key: "configuration text after case folding, digit collapsing and whitespace folding", Seen: int64(*n), Exact: true,
						Note: "rows are drawn without replacement from distinct baseline variants × mutation sets, so none is dropped"},
					Notes: []string{
						"labels.expected = union of the injected mutations' mapped finding ids",
						fmt.Sprintf("every row confirmed by the verifiers (kube-linter or trivy, and OPA report exactly the labelled catalogue ids); %d candidate(s) contradicted and replaced", st.Rejected),
						"splits keep each group (meta.group: baseline + mutation set) whole, stratified by fixture type × clean/findings",
					},
				}
				counts, groups, err := writeSplits(*out, rows, *seed, card)
				if err != nil {
					return err
				}
				w := dw.Out
				fmt.Fprintf(w, "wrote %s: %d rows (train %d, dev %d, test %d)\n", *out, len(rows), counts["train"], counts["dev"], counts["test"])
				fmt.Fprintf(w, "  %d verified by the verifiers", st.Verified)
				if st.Rejected > 0 {
					fmt.Fprintf(w, " (%d contradicted and replaced: %s)", st.Rejected, strings.Join(st.RejectedExamples, "; "))
				}
				fmt.Fprintf(w, "; %d groups (baseline + mutation set) kept whole within a split\n", groups)
				fmt.Fprintf(w, "  at most %d distinct rows with these options\n", st.MaxN)
				return nil
			}
		},
	}
}

func buildCommand() env.DataCommand {
	return env.DataCommand{
		Kind:  env.DataBuild,
		Short: "Build an E2 dataset from your own Kubernetes manifests and Terraform, labelled by the verifiers",
		Long: `Walks --k8s-root for *.yaml/*.yml (multi-document files are split, one row per Kubernetes
object) and --tf-root for *.tf (one row per file), drops exact duplicates by content hash, labels
every row with the findings of kube-linter, trivy and OPA (plus --policy-dir Rego), and writes
stratified train/dev/test.jsonl with card.json and README.md.`,
		Example: "  svbench data build e2 --k8s-root ./deploy --tf-root ./infra --out data/e2-mine",
		Flags: func(f *pflag.FlagSet) env.DataRunner {
			k8sRoot := f.String("k8s-root", "", "directory of Kubernetes manifests")
			tfRoot := f.String("tf-root", "", "directory of Terraform files")
			out := f.String("out", "", "output directory")
			seed := f.Uint64("seed", 1, "split seed")
			policyDirs := f.StringSlice("policy-dir", nil, "extra Rego policy directories")
			return func(ctx context.Context, _ []string, dw env.DataIO) error {
				if *out == "" {
					return env.Usagef("--out is required: the directory to write the splits to")
				}
				if *k8sRoot == "" && *tfRoot == "" {
					return env.Usagef("give --k8s-root and/or --tf-root")
				}
				e, err := NewEnv(env.Options{Params: map[string]string{"policy_dirs": strings.Join(*policyDirs, string(os.PathListSeparator))}})
				if err != nil {
					return err
				}
				rows, st, err := e.BuildFromRoots(ctx, *k8sRoot, *tfRoot)
				if err != nil {
					return err
				}
				for _, s := range st.Skipped {
					fmt.Fprintln(dw.Err, "skipped:", s)
				}
				if len(rows) == 0 {
					return fmt.Errorf("no Kubernetes objects or Terraform files found under the given roots")
				}
				card := &dataset.Card{
					Name: "e2-imported", Env: ID, Version: Version, Created: time.Now().UTC(), Seed: *seed,
					Importer: &dataset.Producer{Name: "configaudit.BuildFromRoots", Version: Version, Params: map[string]any{
						"k8s_root": *k8sRoot, "tf_root": *tfRoot, "policy_dirs": *policyDirs}},
					Dedup: &dataset.Dedup{Key: "sha256 of the document/file content", Seen: int64(st.Documents), Dropped: int64(st.Duplicates), Exact: true},
					Notes: []string{"labels.expected = the verifiers' findings on each row (kube-linter default + RBAC checks, trivy, OPA)",
						fmt.Sprintf("%d files read, %d skipped", st.Files, len(st.Skipped))},
				}
				counts, _, err := writeSplits(*out, rows, *seed, card)
				if err != nil {
					return err
				}
				fmt.Fprintf(dw.Out, "wrote %s: %d rows from %d files, %d duplicates dropped (train %d, dev %d, test %d)\n",
					*out, len(rows), st.Files, st.Duplicates, counts["train"], counts["dev"], counts["test"])
				return nil
			}
		},
	}
}

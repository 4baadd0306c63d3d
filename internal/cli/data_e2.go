package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/configaudit"
)

var e2Ratios = [3]float64{0.7, 0.15, 0.15}

// writeE2Splits splits rows by fixture type × clean/findings and writes
// train/dev/test plus the card.
func writeE2Splits(out string, rows []configaudit.Row, seed uint64, card *dataset.Card) (map[string]int, error) {
	keys := make([]string, len(rows))
	labels := map[string]int{}
	for i, r := range rows {
		keys[i] = r.StratumKey()
		labels[keys[i]]++
	}
	split := dataset.StratifiedSplit(keys, e2Ratios, seed)
	splits := map[string][]any{}
	counts := map[string]int{}
	for name, idx := range split.Sets() {
		for _, i := range idx {
			splits[name] = append(splits[name], rows[i])
		}
		counts[name] = len(idx)
	}
	card.Counts.Labels = labels
	if err := dataset.WriteSplits(out, splits, card); err != nil {
		return nil, fmt.Errorf("write %s: %w", out, err)
	}
	return counts, nil
}

func newDataGenerateE2Cmd() *cobra.Command {
	var (
		n           int
		seed        uint64
		out         string
		tfShare     float64
		cleanShare  float64
		maxMutation int
	)
	cmd := &cobra.Command{
		Use:   "e2",
		Short: "Generate E2 rows: secure Kubernetes/Terraform baselines with injected, labelled misconfigurations",
		Long: `Takes svbench's embedded secure baselines (Kubernetes workloads, Services, Ingress, RBAC,
NetworkPolicy; Terraform for AWS, GCP and Azure) and injects 1..max named misconfigurations
per row (privileged, hostNetwork, root user, latest tag, public S3, 0.0.0.0/0 SSH, …). Labels are
the mutations and the finding ids they map to, independent of running any tool. Some rows stay
clean. Writes train/dev/test.jsonl, card.json and README.md. The same --seed and --n give the
same bytes.`,
		Example: "  svbench data generate e2 --n 2000 --seed 7 --out data/e2-gen",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out is required: the directory to write the splits to")
			}
			if n <= 0 {
				return usagef("--n must be positive, got %d", n)
			}
			if tfShare < 0 || tfShare >= 1 || cleanShare < 0 || cleanShare >= 1 {
				return usagef("--tf-share and --clean-share must be in [0, 1)")
			}
			rows, err := configaudit.Generate(configaudit.GenOptions{N: n, Seed: seed, TFShare: tfShare, CleanShare: cleanShare, MaxMutations: maxMutation})
			if err != nil {
				return err
			}
			card := &dataset.Card{
				Name: "e2-generated", Env: configaudit.ID, Version: configaudit.Version, Created: time.Now().UTC(), Seed: seed,
				Generator: &dataset.Producer{Name: "configaudit.Generate", Version: configaudit.Version, Params: map[string]any{
					"n": n, "tf_share": tfShare, "clean_share": cleanShare, "max_mutations": maxMutation}},
				Licence: "Apache-2.0 (svbench's own corpus)",
				Notes:   []string{"labels.expected = union of the injected mutations' mapped finding ids; the verifiers confirm them in svbench's tests"},
			}
			counts, err := writeE2Splits(out, rows, seed, card)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d rows (train %d, dev %d, test %d)\n", out, len(rows), counts["train"], counts["dev"], counts["test"])
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "n", 1000, "rows to generate")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "generator and split seed")
	cmd.Flags().StringVar(&out, "out", "", "output directory")
	cmd.Flags().Float64Var(&tfShare, "tf-share", 0.45, "share of Terraform rows")
	cmd.Flags().Float64Var(&cleanShare, "clean-share", 0.1, "share of clean (unmutated) rows")
	cmd.Flags().IntVar(&maxMutation, "max-mutations", 3, "most mutations injected into one row")
	return cmd
}

func newDataBuildE2Cmd() *cobra.Command {
	var (
		k8sRoot, tfRoot, out string
		seed                 uint64
		policyDirs           []string
	)
	cmd := &cobra.Command{
		Use:   "e2",
		Short: "Build an E2 dataset from your own Kubernetes manifests and Terraform, labelled by the verifiers",
		Long: `Walks --k8s-root for *.yaml/*.yml (multi-document files are split, one row per Kubernetes
object) and --tf-root for *.tf (one row per file), drops exact duplicates by content hash, labels
every row with the findings of kube-linter, trivy and OPA (plus --policy-dir Rego), and writes
stratified train/dev/test.jsonl with card.json and README.md.`,
		Example: "  svbench data build e2 --k8s-root ./deploy --tf-root ./infra --out data/e2-mine",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out is required: the directory to write the splits to")
			}
			if k8sRoot == "" && tfRoot == "" {
				return usagef("give --k8s-root and/or --tf-root")
			}
			e, err := configaudit.NewEnv(env.Options{PolicyDirs: policyDirs})
			if err != nil {
				return err
			}
			rows, st, err := e.BuildFromRoots(cmd.Context(), k8sRoot, tfRoot)
			if err != nil {
				return err
			}
			for _, s := range st.Skipped {
				fmt.Fprintln(cmd.ErrOrStderr(), "skipped:", s)
			}
			if len(rows) == 0 {
				return fmt.Errorf("no Kubernetes objects or Terraform files found under the given roots")
			}
			card := &dataset.Card{
				Name: "e2-imported", Env: configaudit.ID, Version: configaudit.Version, Created: time.Now().UTC(), Seed: seed,
				Importer: &dataset.Producer{Name: "configaudit.BuildFromRoots", Version: configaudit.Version, Params: map[string]any{
					"k8s_root": k8sRoot, "tf_root": tfRoot, "policy_dirs": policyDirs}},
				Dedup: &dataset.Dedup{Key: "sha256 of the document/file content", Seen: int64(st.Documents), Dropped: int64(st.Duplicates), Exact: true},
				Notes: []string{"labels.expected = the verifiers' findings on each row (kube-linter default + RBAC checks, trivy, OPA)",
					fmt.Sprintf("%d files read, %d skipped", st.Files, len(st.Skipped))},
			}
			counts, err := writeE2Splits(out, rows, seed, card)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %d rows from %d files, %d duplicates dropped (train %d, dev %d, test %d)\n",
				out, len(rows), st.Files, st.Duplicates, counts["train"], counts["dev"], counts["test"])
			return nil
		},
	}
	cmd.Flags().StringVar(&k8sRoot, "k8s-root", "", "directory of Kubernetes manifests")
	cmd.Flags().StringVar(&tfRoot, "tf-root", "", "directory of Terraform files")
	cmd.Flags().StringVar(&out, "out", "", "output directory")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "split seed")
	cmd.Flags().StringSliceVar(&policyDirs, "policy-dir", nil, "extra Rego policy directories")
	return cmd
}

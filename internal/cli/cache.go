package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/llm/cache"
	"github.com/svbench/svbench/llm/usage"
	"github.com/svbench/svbench/report"
)

// cacheFlags configure the response cache for eval and the cache command.
type cacheFlags struct {
	enabled bool
	dir     string
	ttl     time.Duration
	maxMB   int64
}

func (f *cacheFlags) registerLocation(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.dir, "cache-dir", "", "response cache directory (default: svbench under the user cache directory, e.g. ~/.cache/svbench)")
	fs.DurationVar(&f.ttl, "cache-ttl", cache.DefaultMaxAge, "responses older than this are not replayed and are pruned")
	fs.Int64Var(&f.maxMB, "cache-max-mb", cache.DefaultMaxBytes>>20, "size limit of the cached responses in MiB; past it the oldest are pruned")
}

func (f *cacheFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.enabled, "cache", false, "replay identical model requests (same endpoint, model, messages, tools, sampling and rollout index) from a local SQLite cache; judge calls too")
	f.registerLocation(cmd)
}

func (f *cacheFlags) options(warn func(error)) (cache.Options, error) {
	if f.ttl < 0 {
		return cache.Options{}, usagef("--cache-ttl %s: want a positive duration", f.ttl)
	}
	if f.maxMB < 0 {
		return cache.Options{}, usagef("--cache-max-mb %d: want a positive size", f.maxMB)
	}
	return cache.Options{Dir: f.dir, MaxAge: f.ttl, MaxBytes: f.maxMB << 20, Warn: warn}, nil
}

// open returns the run's cache, or nil when --cache is off. It never fails
// on the cache file itself: a broken cache is reported and bypassed.
func (f *cacheFlags) open(ctx context.Context, stderr io.Writer) (*cache.Cache, error) {
	if !f.enabled {
		return nil, nil
	}
	opts, err := f.options(func(err error) { fmt.Fprintf(stderr, "warning: %v\n", err) })
	if err != nil {
		return nil, err
	}
	return cache.OpenOrBypass(ctx, opts), nil
}

// warnRejectedEntries says how many cache entries failed their checks this
// session and why: a cache that keeps rejecting entries has been edited or
// corrupted, and the run paid for answers it thought it had.
func warnRejectedEntries(w io.Writer, c *cache.Cache) {
	if c == nil {
		return
	}
	n := c.Counts()
	total := n.RejectedTotal()
	if total == 0 {
		return
	}
	var why []string
	for _, r := range slices.Sorted(maps.Keys(n.Rejected)) {
		why = append(why, fmt.Sprintf("%s %d", r, n.Rejected[r]))
	}
	fmt.Fprintf(w, "warning: response cache %s: %d entries failed their checks and were asked again (%s)\n", c.Path(), total, strings.Join(why, ", "))
}

func newCacheCmd() *cobra.Command {
	var f cacheFlags
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect, prune or clear the response cache that `svbench eval --cache` uses",
		Args:  cobra.NoArgs,
	}
	openStrict := func(cmd *cobra.Command) (*cache.Cache, error) {
		opts, err := f.options(nil)
		if err != nil {
			return nil, err
		}
		return cache.Open(cmd.Context(), opts)
	}
	var asJSON bool
	stats := &cobra.Command{
		Use:   "stats",
		Short: "Entries, size, age and the models the cache holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := openStrict(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.Stats(cmd.Context())
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			fmt.Fprintf(w, "cache      %s\n", st.Path)
			fmt.Fprintf(w, "entries    %d (%d expired, older than %s)\n", st.Entries, st.Expired, st.MaxAge)
			fmt.Fprintf(w, "responses  %s of %s allowed; file %s\n", mib(st.Bytes), mib(st.MaxBytes), mib(st.FileBytes))
			if !st.Oldest.IsZero() {
				fmt.Fprintf(w, "oldest     %s\nnewest     %s\n", st.Oldest.Format(time.RFC3339), st.Newest.Format(time.RFC3339))
			}
			for _, m := range st.Models {
				fmt.Fprintf(w, "  %-40s %8d entries  %s\n", m.Model, m.Entries, mib(m.Bytes))
			}
			return nil
		},
	}
	stats.Flags().BoolVar(&asJSON, "json", false, "print the statistics as JSON")
	// remove runs one of the cache's removals and says how many went.
	remove := func(fn func(*cache.Cache, context.Context) (int64, error)) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, _ []string) error {
			c, err := openStrict(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			n, err := fn(c, cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed %d entries from %s\n", n, c.Path())
			return nil
		}
	}
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Remove expired entries (--cache-ttl), then the oldest until under --cache-max-mb",
		Args:  cobra.NoArgs,
		RunE:  remove((*cache.Cache).Prune),
	}
	clear := &cobra.Command{
		Use:   "clear",
		Short: "Remove every cached response",
		Args:  cobra.NoArgs,
		RunE:  remove((*cache.Cache).Clear),
	}
	f.registerLocation(cmd)
	for _, sub := range []*cobra.Command{stats, prune, clear} {
		sub.Flags().AddFlagSet(cmd.Flags())
		cmd.AddCommand(sub)
	}
	return cmd
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// printUsage prints token usage by role and model, and the cost.
func printUsage(w io.Writer, m *artifact.Metadata) {
	if len(m.UsageByModel) == 0 {
		return
	}
	for _, u := range m.UsageByModel {
		fmt.Fprintf(w, "  %-7s %-28s %d calls, %d prompt + %d completion tokens", u.Role, u.Model, u.Calls, u.Usage.PromptTokens, u.Usage.CompletionTokens)
		if u.Usage.ReasoningTokens > 0 {
			fmt.Fprintf(w, " (%d reasoning)", u.Usage.ReasoningTokens)
		}
		if u.CachedCalls > 0 {
			fmt.Fprintf(w, ", %d replayed from the cache", u.CachedCalls)
		}
		if u.CacheRejected > 0 {
			fmt.Fprintf(w, ", %d cache entries rejected and asked again", u.CacheRejected)
		}
		if u.Errors > 0 {
			fmt.Fprintf(w, ", %d call(s) failed", u.Errors)
		}
		if u.Cost != nil && m.Cost != nil {
			fmt.Fprintf(w, ", %s", usage.FormatCost(*u.Cost, m.Cost.Currency))
		}
		fmt.Fprintln(w)
	}
	if c := m.Cost; c != nil {
		fmt.Fprintf(w, "  cost        %s (prices of %s)\n", report.CostText(c), c.PricesDate)
	}
}

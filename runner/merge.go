package runner

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/llm/usage"
)

// Merge joins the run directories of a sharded evaluation into one run in
// outDir. It refuses shards whose configuration differs, a missing or
// repeated shard, and duplicate (example, rollout) pairs.
func Merge(shardDirs []string, outDir string) (*artifact.Metadata, error) {
	if len(shardDirs) == 0 {
		return nil, fmt.Errorf("merge: no shard directories given")
	}
	metas := make([]*artifact.Metadata, len(shardDirs))
	for i, d := range shardDirs {
		m, err := artifact.ReadMetadata(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		metas[i] = m
	}
	first := metas[0]
	seen := map[int]string{}
	count := 0
	for i, m := range metas {
		if diff := configDiff(first, m); diff != "" {
			return nil, fmt.Errorf("merge: %s differs from %s: %s", shardDirs[i], shardDirs[0], diff)
		}
		sh, err := ParseShard(m.Shard)
		if err != nil {
			return nil, fmt.Errorf("merge: %s: %w", shardDirs[i], err)
		}
		if sh.Count <= 1 {
			return nil, fmt.Errorf("merge: %s is not a shard (no --shard in its metadata)", shardDirs[i])
		}
		if count == 0 {
			count = sh.Count
		} else if sh.Count != count {
			return nil, fmt.Errorf("merge: %s is shard %s but others are of %d", shardDirs[i], m.Shard, count)
		}
		if prev, dup := seen[sh.Index]; dup {
			return nil, fmt.Errorf("merge: shard %d given twice (%s and %s)", sh.Index, prev, shardDirs[i])
		}
		seen[sh.Index] = shardDirs[i]
		if m.Status != artifact.StatusCompleted {
			return nil, fmt.Errorf("merge: %s has status %q; resume it to completion first", shardDirs[i], m.Status)
		}
	}
	if len(seen) != count {
		var missing []string
		for i := range count {
			if _, ok := seen[i]; !ok {
				missing = append(missing, fmt.Sprint(i))
			}
		}
		return nil, fmt.Errorf("merge: missing shard(s) %s of %d", strings.Join(missing, ","), count)
	}

	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, err
	}
	var rows []artifact.Result
	keys := map[artifact.Key]string{}
	agg := newAggregate()
	// Every shard's sessions, in shard order; a row's segment is renumbered
	// into the merged list.
	var segments []artifact.Segment
	for i, d := range shardDirs {
		offset := len(segments)
		segs := metas[i].Segments
		if len(segs) == 0 {
			segs = []artifact.Segment{{Started: metas[i].Started, BaseURL: metas[i].BaseURL, APIKeyEnv: metas[i].Launch.APIKeyEnv, EndpointsFile: metas[i].Launch.EndpointsFile}}
		}
		segments = append(segments, segs...)
		err := artifact.EachResult(filepath.Join(d, artifact.ResultsFile), func(r *artifact.Result) error {
			if prev, dup := keys[r.Key()]; dup {
				return fmt.Errorf("example %d rollout %d appears in %s and %s", r.Index, r.Rollout, prev, d)
			}
			r.Segment += offset
			keys[r.Key()] = d
			rows = append(rows, *r)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
	}
	// Canonical order, so a merged run is byte-comparable with others.
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Index != rows[j].Index {
			return rows[i].Index < rows[j].Index
		}
		return rows[i].Rollout < rows[j].Rollout
	})
	var sb strings.Builder
	merged := *first
	merged.RunID = NewRunID(time.Now())
	merged.Shard = ""
	merged.DurationS = 0
	for i := range rows {
		rows[i].RunID = merged.RunID
		b, err := json.Marshal(rows[i])
		if err != nil {
			return nil, err
		}
		sb.Write(b)
		sb.WriteByte('\n')
		agg.add(&rows[i])
	}
	for _, m := range metas {
		if m.Started.Before(merged.Started) {
			merged.Started = m.Started
		}
	}
	merged.DurationS = wallSeconds(metas)
	merged.Segments = segments
	merged.Status = artifact.StatusCompleted
	merged.StatusDetail = fmt.Sprintf("merged from %d shards", count)
	agg.fill(&merged)
	// What was spent is the sum of what every shard spent: metadata.json of
	// the first shard alone would under-count calls, tokens and cost.
	var costNote string
	merged.UsageByModel, merged.Cost, costNote = mergeUsage(metas)
	if costNote != "" {
		merged.StatusDetail += "; " + costNote
	}
	if err := artifact.WriteFileAtomic(filepath.Join(outDir, artifact.ResultsFile), []byte(sb.String())); err != nil {
		return nil, err
	}
	if err := artifact.WriteJSONAtomic(filepath.Join(outDir, artifact.MetadataFile), &merged); err != nil {
		return nil, err
	}
	return &merged, nil
}

// configDiff names the first setting in which two shard runs differ.
func configDiff(a, b *artifact.Metadata) string {
	checks := []struct {
		name string
		x, y any
	}{
		{"environment", a.Environment, b.Environment},
		{"env_version", a.EnvVersion, b.EnvVersion},
		{"rubric", a.Rubric, b.Rubric},
		{"model", a.Model, b.Model},
		{"effective_model", a.EffectiveModel, b.EffectiveModel},
		{"dataset_revision", a.DatasetRev, b.DatasetRev},
		{"num_examples", a.NumExamples, b.NumExamples},
		{"rollouts_per_example", a.Rollouts, b.Rollouts},
		{"seed", a.Seed, b.Seed},
		{"sampling", string(a.Sampling), string(b.Sampling)},
	}
	for _, c := range checks {
		if c.x != c.y {
			return fmt.Sprintf("%s %v ≠ %v", c.name, c.x, c.y)
		}
	}
	return ""
}

// mergeUsage adds the shards' usage by (role, model) and their costs. The
// cost is the sum of the shards' when every shard that used tokens was
// priced in one currency; otherwise it is left out and note says why.
func mergeUsage(metas []*artifact.Metadata) ([]artifact.ModelUsage, *artifact.Cost, string) {
	rec := usage.New()
	type key struct{ role, model string }
	costs := map[key]float64{}
	priced := map[key]bool{}
	var cost *artifact.Cost
	note := ""
	for _, m := range metas {
		rec.Accumulate(m.UsageByModel)
		for _, u := range m.UsageByModel {
			if u.Cost != nil {
				k := key{u.Role, u.Model}
				costs[k] += *u.Cost
				priced[k] = true
			}
		}
		switch c := m.Cost; {
		case c == nil && len(m.UsageByModel) > 0:
			note = "cost left out: a shard ran without --prices"
		case c == nil:
		case cost == nil:
			cc := *c
			cc.Unpriced = slices.Clone(c.Unpriced)
			cost = &cc
		case c.Currency != cost.Currency:
			note = fmt.Sprintf("cost left out: shards priced in %s and %s", cost.Currency, c.Currency)
		default:
			cost.Total += c.Total
			cost.Unpriced = append(cost.Unpriced, c.Unpriced...)
			if c.PricesDate != cost.PricesDate || c.PricesFile != cost.PricesFile {
				cost.PricesDate = strings.Join(slices.Compact(slices.Sorted(slices.Values(strings.Split(cost.PricesDate+", "+c.PricesDate, ", ")))), ", ")
			}
		}
	}
	us := rec.Snapshot()
	if note != "" {
		return us, nil, note
	}
	for i := range us {
		if k := (key{us[i].Role, us[i].Model}); priced[k] {
			v := costs[k]
			us[i].Cost = &v
		}
	}
	if cost != nil {
		slices.Sort(cost.Unpriced)
		cost.Unpriced = slices.Compact(cost.Unpriced)
	}
	return us, cost, ""
}

// wallSeconds is the time the shards ran, counting once the time several
// ran at together: the union of each shard's [finished − duration,
// finished]. Shards run one after another add up; shards run side by side
// (an Indexed Job) take as long as the longest. A shard without a finish
// time counts its duration alone.
func wallSeconds(metas []*artifact.Metadata) float64 {
	type span struct{ lo, hi float64 }
	var spans []span
	loose := 0.0
	for _, m := range metas {
		if m.Finished == nil {
			loose += m.DurationS
			continue
		}
		hi := float64(m.Finished.UnixNano()) / 1e9
		spans = append(spans, span{hi - m.DurationS, hi})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	total := loose
	for i := 0; i < len(spans); {
		lo, hi := spans[i].lo, spans[i].hi
		j := i + 1
		for ; j < len(spans) && spans[j].lo <= hi; j++ {
			hi = max(hi, spans[j].hi)
		}
		total += hi - lo
		i = j
	}
	return total
}

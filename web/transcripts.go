package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/svbench/svbench/env"
)

// Filters for the transcript list.
var transcriptFilters = []struct{ Key, Label string }{
	{"all", "all"}, {"wrong", "wrong (not solved)"}, {"solved", "solved"}, {"errors", "errors"}, {"disagree", "reward sources disagree"},
}

// Sort orders for the transcript list.
var transcriptSorts = []struct{ Key, Label string }{
	{"file", "file order"}, {"reward-asc", "lowest reward"}, {"reward-desc", "highest reward"},
}

func keepRow(filter string, ri rowInfo) bool {
	switch filter {
	case "wrong":
		return ri.flags&flagUnsolved != 0 && ri.flags&(flagError|flagScoreErr) == 0
	case "solved":
		return ri.flags&flagSolved != 0
	case "errors":
		return ri.flags&(flagError|flagScoreErr|flagUnreadable|flagTooLarge) != 0
	case "disagree":
		return ri.flags&flagDisagree != 0
	}
	return true
}

// TranscriptItem is one line of the transcript list.
type TranscriptItem struct {
	Row       int
	Index     int
	Rollout   int
	ExampleID string
	Reward    float64
	Solved    *bool
	Error     string
	Preview   string
	// TooLarge is the size of a row not read for its size; 0 otherwise.
	TooLarge int64
}

func (s *Server) handleTranscripts(w http.ResponseWriter, r *http.Request) {
	id, dir, _, ok := s.runFromQuery(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	filter, order := q.Get("filter"), q.Get("sort")
	if !slices.ContainsFunc(transcriptFilters, func(f struct{ Key, Label string }) bool { return f.Key == filter }) {
		filter = "all"
	}
	if !slices.ContainsFunc(transcriptSorts, func(f struct{ Key, Label string }) bool { return f.Key == order }) {
		order = "file"
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 0)
	ix := s.index(dir)
	rows, err := ix.update()
	if err != nil {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("run %s: %v", id, err))
		return
	}
	sel := ix.selection(filter, order, rows, func() []int32 {
		var sel []int32
		for i, ri := range rows {
			if keepRow(filter, ri) {
				sel = append(sel, int32(i))
			}
		}
		switch order {
		case "reward-asc", "reward-desc":
			sign := 1.0
			if order == "reward-desc" {
				sign = -1
			}
			slices.SortStableFunc(sel, func(a, b int32) int {
				// Unscored rows last in both orders.
				ua, ub := rows[a].flags&unscored != 0, rows[b].flags&unscored != 0
				if ua != ub {
					if ua {
						return 1
					}
					return -1
				}
				return cmp.Compare(sign*rows[a].reward, sign*rows[b].reward)
			})
		}
		return sel
	})
	pages := max((len(sel)+pageSize-1)/pageSize, 1)
	page = min(page, pages-1)
	lo, hi := page*pageSize, min((page+1)*pageSize, len(sel))
	var items []TranscriptItem
	for _, pos := range sel[lo:hi] {
		ri := rows[pos]
		it := TranscriptItem{Row: int(pos), Index: int(ri.index), Rollout: int(ri.rollout), Reward: ri.reward}
		res, err := ix.readRow(ri)
		var big *tooLargeRow
		switch {
		case errors.As(err, &big):
			it.Error, it.TooLarge = err.Error(), big.size
		case err != nil:
			it.Error = err.Error()
		default:
			it.ExampleID, it.Solved, it.Preview = res.ExampleID, res.Solved, previewText(res.FinalText, 240)
			it.Error = previewText(strings.TrimPrefix(res.Error+"; "+res.ScoreError, "; "), 200)
			it.Error = strings.TrimSuffix(it.Error, "; ")
		}
		items = append(items, it)
	}
	s.render(w, "transcripts", "transcripts "+id, map[string]any{
		"ID": id, "Items": items, "Filter": filter, "Sort": order, "Filters": transcriptFilters, "Sorts": transcriptSorts,
		"Page": page, "Pages": pages, "Matched": len(sel), "Total": len(rows),
		"Prev": page - 1, "Next": page + 1, "HasPrev": page > 0, "HasNext": page+1 < pages,
	})
}

// ---- one rollout -------------------------------------------------------

// ComponentView is one reward component with its weight.
type ComponentView struct {
	Name   string
	Value  float64
	Weight *float64
}

func (s *Server) handleRollout(w http.ResponseWriter, r *http.Request) {
	id, dir, meta, ok := s.runFromQuery(w, r)
	if !ok {
		return
	}
	ix := s.index(dir)
	rows, err := ix.update()
	if err != nil {
		s.fail(w, http.StatusNotFound, err.Error())
		return
	}
	row, err := strconv.Atoi(r.URL.Query().Get("row"))
	if err != nil || row < 0 || row >= len(rows) {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("run %s has rows 0 to %d; ?row=%q is not one of them", id, len(rows)-1, r.URL.Query().Get("row")))
		return
	}
	res, err := ix.readRow(rows[row])
	var big *tooLargeRow
	if errors.As(err, &big) {
		s.fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("rollout %d of %s: %v; the dashboard reads rows up to %d bytes (the row is at byte %d of results.jsonl)", row, id, err, s.opts.MaxRowBytes, rows[row].off))
		return
	}
	if err != nil {
		s.fail(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	var comps []ComponentView
	for _, k := range slices.Sorted(maps.Keys(res.Components)) {
		c := ComponentView{Name: k, Value: res.Components[k]}
		if wt, ok := res.Weights[k]; ok {
			c.Weight = &wt
		}
		comps = append(comps, c)
	}
	parsedKeys := slices.Sorted(maps.Keys(res.Parsed))
	var answer any
	if len(res.Answer) > 0 {
		json.Unmarshal(res.Answer, &answer)
	}
	msgs := messageViews(res.Completion, res.ToolCalls)
	s.render(w, "rollout", fmt.Sprintf("rollout %d of %s", row, id), map[string]any{
		"ID": id, "Row": row, "R": res, "Meta": meta, "Components": comps, "ParsedKeys": parsedKeys,
		"Answer": answer, "Prev": row - 1, "Next": row + 1, "HasPrev": row > 0, "HasNext": row+1 < len(rows),
		"Messages": msgs, "Prompt": messageViews(res.Prompt, nil), "OtherCalls": unmatchedRecords(msgs, res.ToolCalls),
	})
}

// MessageView is a chat message with its tool calls' arguments made
// readable.
type MessageView struct {
	env.Message
	Calls []CallView
}

// CallView is one tool call, with what running it recorded (Run) when
// the row has its record.
type CallView struct {
	ID, Name string
	Args     Clipped
	Run      *env.ToolCallRecord
}

// messageViews lays the conversation out as it happened: each assistant
// turn's reasoning, then its text, then its tool calls each with its run
// (duration, findings, error from the row's tool-call records, matched by
// turn and order), then the tool results that follow.
func messageViews(msgs []env.Message, records []env.ToolCallRecord) []MessageView {
	byTurn := map[int][]int{} // indices into records
	for i, r := range records {
		byTurn[r.Turn] = append(byTurn[r.Turn], i)
	}
	out := make([]MessageView, 0, len(msgs))
	turn := 0
	for _, m := range msgs {
		v := MessageView{Message: m}
		if m.Role == env.RoleAssistant {
			turn++
		}
		recs := byTurn[turn]
		for i, c := range m.ToolCalls {
			args := c.Arguments
			var js any
			if json.Unmarshal([]byte(args), &js) == nil {
				args = prettyJSON(js)
			}
			cv := CallView{ID: c.ID, Name: c.Name, Args: newClipped(args)}
			if i < len(recs) && records[recs[i]].Name == c.Name {
				cv.Run = &records[recs[i]]
			}
			v.Calls = append(v.Calls, cv)
		}
		out = append(out, v)
	}
	return out
}

// unmatchedRecords are the tool-call records no message shows (rows whose
// completion was not kept): listed apart so none is lost.
func unmatchedRecords(views []MessageView, records []env.ToolCallRecord) []env.ToolCallRecord {
	seen := map[*env.ToolCallRecord]bool{}
	for _, v := range views {
		for _, c := range v.Calls {
			if c.Run != nil {
				seen[c.Run] = true
			}
		}
	}
	var out []env.ToolCallRecord
	for i := range records {
		if !seen[&records[i]] {
			out = append(out, records[i])
		}
	}
	return out
}

// ---- compare -----------------------------------------------------------

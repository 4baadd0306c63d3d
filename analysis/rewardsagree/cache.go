package rewardsagree

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
)

// CacheFile is the judge cache's name inside a run directory.
const CacheFile = "judge_cache.jsonl"

// maxCacheLine bounds one cache line (a reply is capped far below this by
// the judge's max tokens; a longer line is a damaged file).
const maxCacheLine = 4 << 20

// cacheEntry is one line of the cache file.
type cacheEntry struct {
	Key   string    `json:"key"`
	Model string    `json:"model"`
	Reply string    `json:"reply"`
	Usage env.Usage `json:"usage"`
}

// CacheStats is what judging cost: calls actually sent, answers served
// from the cache, failed calls, and the tokens the sent calls used.
type CacheStats struct {
	Calls  int       `json:"calls"`
	Hits   int       `json:"cache_hits"`
	Errors int       `json:"errors"`
	Usage  env.Usage `json:"usage"`
	// Loaded counts the answers the cache file held when opened.
	Loaded int `json:"loaded"`
	// NonVerdicts counts replies that were neither yes nor no: returned,
	// never cached.
	NonVerdicts int `json:"non_verdicts,omitempty"`
}

// isVerdict reports whether a reply reads as the judge's yes or no, the
// only replies the cache keeps.
func isVerdict(reply string) bool {
	_, err := judgeutil.ParseVerdict(reply)
	return err == nil
}

// Cache is a judge (an env.Model) that answers a question it has seen
// (same judge model, system and prompt) from memory and the run's cache file, so
// re-running a study costs nothing. Only verdicts are cached: a failed
// call, or a reply that is neither yes nor no, is asked again next time. Identical questions in flight at once are asked
// once. It is safe for concurrent use.
type Cache struct {
	judge env.Model
	model string

	mu       sync.Mutex
	entries  map[string]cacheEntry
	inflight map[string]*flight
	w        *bufio.Writer
	f        *os.File
	stats    CacheStats
}

type flight struct {
	done  chan struct{}
	reply string
	err   error
}

// OpenCache loads the cache file at path (created when missing) for the
// named judge model. Entries of other models are kept in the file but never
// answer for this one. A torn last line (a killed writer) is ignored.
func OpenCache(path, model string, j env.Model) (*Cache, error) {
	c := &Cache{judge: j, model: model, entries: map[string]cacheEntry{}, inflight: map[string]*flight{}}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("judge cache: %w", err)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var good int64 // bytes up to the end of the last complete line
	for line := 1; ; line++ {
		b, n, rerr := readBounded(br)
		if errors.Is(rerr, io.EOF) {
			// A final line without its newline is a killed writer's torn
			// entry: dropped, and cut off so appends stay line-aligned.
			break
		}
		if rerr != nil {
			f.Close()
			return nil, fmt.Errorf("judge cache %s: line %d: %w", path, line, rerr)
		}
		good += int64(n)
		if len(b) == 0 {
			continue
		}
		var e cacheEntry
		if jerr := json.Unmarshal(b, &e); jerr != nil || e.Key == "" {
			f.Close()
			return nil, fmt.Errorf("judge cache %s: line %d is not a cache entry (delete the file to start afresh): %v", path, line, jerr)
		}
		// Only verdicts answer again: a non-answer a cache of an older
		// svbench kept (a misconfigured judge's empty or evasive reply)
		// is asked anew.
		if e.Model == model && isVerdict(e.Reply) {
			c.entries[e.Key] = e
		}
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("judge cache %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("judge cache %s: %w", path, err)
	}
	c.f, c.w = f, bufio.NewWriter(f)
	c.stats.Loaded = len(c.entries)
	return c, nil
}

// readBounded reads one newline-terminated line (without the newline) and
// the bytes it took; a last line without a newline reports io.EOF.
func readBounded(br *bufio.Reader) ([]byte, int, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxCacheLine {
			return nil, 0, fmt.Errorf("line longer than %d MiB", maxCacheLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		return trimNL(buf), len(buf), nil
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Key is the cache key of one question to one judge model.
func Key(model, system, prompt string) string {
	h := sha256.New()
	for _, s := range []string{model, system, prompt} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// conversationKey keys a conversation of another shape than a verdict
// question: every message's role and content.
func conversationKey(model string, msgs []env.Message) string {
	h := sha256.New()
	h.Write([]byte(model))
	h.Write([]byte{0})
	for _, m := range msgs {
		h.Write([]byte(m.Role))
		h.Write([]byte{0})
		h.Write([]byte(m.Content))
		h.Write([]byte{0})
	}
	return "conv:" + hex.EncodeToString(h.Sum(nil))
}

// Name is the judge model the cache answers for.
func (c *Cache) Name() string { return c.model }

// Chat answers from the cache or asks the judge (once per distinct
// question in flight) and records the reply. A verdict question (one
// system and one user message) keeps the key studies have always used, so
// existing cache files keep answering. A reply served from the cache
// reports no tokens: nothing was spent on it.
func (c *Cache) Chat(ctx context.Context, msgs []env.Message) (env.Message, env.Usage, error) {
	k := conversationKey(c.model, msgs)
	if len(msgs) == 2 && msgs[0].Role == env.RoleSystem && msgs[1].Role == env.RoleUser {
		k = Key(c.model, msgs[0].Content, msgs[1].Content)
	}
	reply, usage, err := c.ask(ctx, k, msgs)
	if err != nil {
		return env.Message{}, env.Usage{}, err
	}
	return env.Message{Role: env.RoleAssistant, Content: reply}, usage, nil
}

func (c *Cache) ask(ctx context.Context, k string, msgs []env.Message) (string, env.Usage, error) {
	c.mu.Lock()
	if e, ok := c.entries[k]; ok {
		c.stats.Hits++
		c.mu.Unlock()
		return e.Reply, env.Usage{}, nil
	}
	if fl, ok := c.inflight[k]; ok {
		c.mu.Unlock()
		select {
		case <-fl.done:
		case <-ctx.Done():
			return "", env.Usage{}, ctx.Err()
		}
		if fl.err == nil {
			c.mu.Lock()
			c.stats.Hits++
			c.mu.Unlock()
		}
		return fl.reply, env.Usage{}, fl.err
	}
	fl := &flight{done: make(chan struct{})}
	c.inflight[k] = fl
	c.mu.Unlock()

	reply, usage, err := c.judge.Chat(ctx, msgs)
	fl.reply, fl.err = reply.Content, err

	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.inflight, k)
	defer close(fl.done)
	c.stats.Calls++
	if fl.err != nil {
		c.stats.Errors++
		return "", env.Usage{}, fl.err
	}
	c.stats.Usage.Add(usage)
	if !isVerdict(fl.reply) {
		// A reply that is no verdict (empty, evasive, an error page
		// served as 200) is returned, so the row says "no verdict", but
		// never kept: once the judge is fixed, the re-run asks again.
		c.stats.NonVerdicts++
		return fl.reply, usage, nil
	}
	e := cacheEntry{Key: k, Model: c.model, Reply: fl.reply, Usage: usage}
	c.entries[k] = e
	b, err := json.Marshal(e)
	if err == nil {
		b = append(b, '\n')
		_, err = c.w.Write(b)
	}
	if err == nil {
		// Flushed per entry: a killed study keeps every answer it paid for.
		err = c.w.Flush()
	}
	if err != nil {
		return fl.reply, usage, fmt.Errorf("judge cache: recording a reply: %w", err)
	}
	return fl.reply, usage, nil
}

// Stats returns what judging has cost so far.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Close flushes and closes the cache file.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.w.Flush()
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	c.f = nil
	return err
}

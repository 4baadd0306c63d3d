// Package cache replays model responses from a local SQLite file, so an
// evaluation re-run after a crash, a rubric change or a report fix does not
// pay for the same completions twice. Entries are keyed by everything that
// determines a sample: endpoint, model, messages, tools, sampling parameters
// and the rollout index (so -r 4 still draws four samples). The cache is an
// optimisation and never a reason for a run to fail: a corrupt, locked or
// unwritable file is reported once and bypassed.
//
// The file is as untrusted as the model that filled it. An entry is
// replayed only if it still matches the MAC stored beside it (HMAC-SHA256
// under a secret kept in the user's config directory, see DefaultKeyFile,
// so whoever edits an entry without that secret cannot vouch for the edit)
// and passes the checks a fresh answer to the same request would: an assistant
// message, within the request's max_tokens and an absolute size cap,
// calling only tools the request offered. Any other entry is a miss: the
// model is asked again, its answer overwrites the entry, and the rejection
// is counted (Counts; llm.Response.CacheRejected for usage accounting).
// An entry without a valid MAC (written before MACs existed, with the
// unkeyed SHA-256 of earlier versions, under another user's key, or with
// its hash cleared) is a miss like a wrong one: it is never given a fresh
// MAC, since anyone who can change the column could otherwise have any edit
// blessed on the next read. Such entries are overwritten as they are asked
// again, so an old cache migrates by use.
package cache

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// FileName is the cache database inside the cache directory.
const FileName = "responses.sqlite"

// Defaults for Options.
const (
	DefaultMaxAge      = 30 * 24 * time.Hour
	DefaultMaxBytes    = 1 << 30
	DefaultBusyTimeout = 5 * time.Second
)

// schemaVersion is stored in PRAGMA user_version; a file with another
// version was written by an incompatible svbench and is bypassed. It is
// also part of every key. The content hash column was added without a new
// version: older svbench binaries still read the file; the rows they write
// without a hash are misses here, answered afresh and overwritten.
const schemaVersion = 1

// Options configure a cache.
type Options struct {
	// Dir holds FileName; DefaultDir when empty.
	Dir string
	// MaxAge: older entries are not served and are pruned (DefaultMaxAge
	// when 0).
	MaxAge time.Duration
	// MaxBytes bounds the stored responses; past it the oldest entries are
	// pruned (DefaultMaxBytes when 0).
	MaxBytes int64
	// BusyTimeout is how long a write waits for another process holding
	// the file before the cache is bypassed (DefaultBusyTimeout when 0).
	BusyTimeout time.Duration
	// MaxEntryBytes caps one stored response; a larger entry is never
	// read into memory and counts as rejected (DefaultMaxEntryBytes when
	// 0).
	MaxEntryBytes int64
	// KeyFile holds the secret entries are MAC'd with; DefaultKeyFile when
	// empty. It is created, owner-only, on first use.
	KeyFile string
	// Warn receives the one error that makes the cache bypass itself.
	Warn func(error)
	// Now replaces the clock in tests.
	Now func() time.Time
}

// DefaultDir is svbench's directory under the user cache directory
// ($XDG_CACHE_HOME, ~/.cache, ~/Library/Caches, %LocalAppData%).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%w): pass --cache-dir", err)
	}
	return filepath.Join(d, "svbench"), nil
}

// Cache is an open response cache, safe for concurrent use. Reads run in
// parallel (WAL); writes go through one writer at a time.
type Cache struct {
	db     *sql.DB
	path   string
	opts   Options
	secret []byte // the HMAC key of entries' sums

	wmu  sync.Mutex // the single writer
	size atomic.Int64

	broken   atomic.Bool
	warnOnce sync.Once

	hits, misses, stores, unstored atomic.Int64

	rmu      sync.Mutex
	rejected map[string]int64 // by reason
}

func (o Options) withDefaults() (Options, error) {
	if o.Dir == "" {
		d, err := DefaultDir()
		if err != nil {
			return o, err
		}
		o.Dir = d
	}
	if o.KeyFile == "" {
		k, err := DefaultKeyFile()
		if err != nil {
			return o, err
		}
		o.KeyFile = k
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.MaxEntryBytes <= 0 {
		o.MaxEntryBytes = DefaultMaxEntryBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Open opens (creating if needed) the cache and fails on any problem: for
// `svbench cache` commands, which should say what is wrong.
func Open(ctx context.Context, opts Options) (*Cache, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	// The cache holds prompts and completions: readable by its owner only.
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("response cache: %w", err)
	}
	secret, err := loadKey(opts.KeyFile)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(opts.Dir, FileName)
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", opts.BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("response cache %s: %w", path, err)
	}
	c := &Cache{db: db, path: path, opts: opts, secret: secret}
	if err := c.init(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("response cache %s: %w (remove it with `svbench cache clear --cache-dir %s`, or delete the file)", path, err, opts.Dir)
	}
	return c, nil
}

// OpenOrBypass opens the cache for a run. It never fails: when the file
// cannot be used, the problem goes to opts.Warn once and the returned cache
// passes every call through to the endpoint.
func OpenOrBypass(ctx context.Context, opts Options) *Cache {
	c, err := Open(ctx, opts)
	if err != nil {
		c = &Cache{opts: opts}
		c.fail(err)
	}
	return c
}

func (c *Cache) init(ctx context.Context) error {
	var v int
	if err := c.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return err
	}
	if v != 0 && v != schemaVersion {
		return fmt.Errorf("schema version %d, this svbench uses %d", v, schemaVersion)
	}
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS responses (
			key     BLOB PRIMARY KEY,
			created INTEGER NOT NULL,
			model   TEXT NOT NULL,
			size    INTEGER NOT NULL,
			value   BLOB NOT NULL
		) WITHOUT ROWID`,
		`CREATE INDEX IF NOT EXISTS responses_created ON responses(created)`,
		fmt.Sprintf("PRAGMA user_version = %d", schemaVersion),
	}
	for _, s := range stmts {
		if _, err := c.db.ExecContext(ctx, s); err != nil {
			return err
		}
	}
	if err := c.addSumColumn(ctx); err != nil {
		return fmt.Errorf("add the content hash column: %w", err)
	}
	var size sql.NullInt64
	if err := c.db.QueryRowContext(ctx, "SELECT SUM(size) FROM responses").Scan(&size); err != nil {
		return err
	}
	c.size.Store(size.Int64)
	return nil
}

// addSumColumn gives a file from before content hashes its hash column.
// Two processes may open the same old file at once: the loser of the race
// finds the column there.
func (c *Cache) addSumColumn(ctx context.Context) error {
	has := func() (bool, error) {
		var n int
		err := c.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_table_info('responses') WHERE name = 'sum'").Scan(&n)
		return n > 0, err
	}
	if ok, err := has(); err != nil || ok {
		return err
	}
	if _, err := c.db.ExecContext(ctx, "ALTER TABLE responses ADD COLUMN sum BLOB"); err != nil {
		if ok, herr := has(); herr == nil && ok {
			return nil
		}
		return err
	}
	return nil
}

// Path is the cache file.
func (c *Cache) Path() string { return c.path }

// Close releases the file.
func (c *Cache) Close() error {
	if c == nil || c.db == nil {
		return nil
	}
	return c.db.Close()
}

// Counts are what one session of the cache did.
type Counts struct {
	Hits, Misses, Stores int64
	// Rejected counts, by reason (RejectHash, RejectSize, …), the entries
	// found for a request but not replayed; each is also a miss.
	Rejected map[string]int64
	// Unstored counts fresh answers not stored because they could not be
	// replayed (a tool the request did not offer, over the size bound).
	Unstored int64
}

// RejectedTotal is the number of rejected entries, whatever the reason.
func (n Counts) RejectedTotal() int64 {
	var t int64
	for _, v := range n.Rejected {
		t += v
	}
	return t
}

// Counts returns this session's counts.
func (c *Cache) Counts() Counts {
	c.rmu.Lock()
	rejected := maps.Clone(c.rejected)
	c.rmu.Unlock()
	return Counts{Hits: c.hits.Load(), Misses: c.misses.Load(), Stores: c.stores.Load(),
		Rejected: rejected, Unstored: c.unstored.Load()}
}

func (c *Cache) countRejected(reason string) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if c.rejected == nil {
		c.rejected = map[string]int64{}
	}
	c.rejected[reason]++
}

// Bypassed reports whether the cache gave up after an error.
func (c *Cache) Bypassed() bool { return c.db == nil || c.broken.Load() }

func (c *Cache) fail(err error) {
	c.broken.Store(true)
	c.warnOnce.Do(func() {
		if c.opts.Warn != nil {
			c.opts.Warn(fmt.Errorf("%w; continuing without the response cache", err))
		}
	})
}

// Wrap returns a client that answers from the cache when it can and stores
// what next answers otherwise. baseURL is part of the key: the same model
// name on two servers is two models.
func (c *Cache) Wrap(next llm.Client, baseURL string) llm.Client {
	if c == nil {
		return next
	}
	return &client{next: next, c: c, baseURL: baseURL}
}

type client struct {
	next    llm.Client
	c       *Cache
	baseURL string
}

// keyDoc is what a key hashes. Field order is fixed by the struct and maps
// are sorted by encoding/json, so equal requests give equal keys.
type keyDoc struct {
	V        int           `json:"v"`
	BaseURL  string        `json:"base_url"`
	Model    string        `json:"model"`
	Messages []env.Message `json:"messages"`
	Tools    []env.Tool    `json:"tools"`
	Sampling llm.Sampling  `json:"sampling"`
	Rollout  *int          `json:"rollout"`
}

// Key is the cache key of a request made under ctx.
func Key(ctx context.Context, baseURL string, req llm.Request) ([]byte, error) {
	d := keyDoc{V: schemaVersion, BaseURL: baseURL, Model: req.Model, Messages: req.Messages, Tools: req.Tools, Sampling: req.Sampling}
	if r, ok := llm.RolloutFrom(ctx); ok {
		d.Rollout = &r
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	return sum[:], nil
}

type stored struct {
	Message      env.Message `json:"message"`
	Usage        env.Usage   `json:"usage"`
	FinishReason string      `json:"finish_reason,omitempty"`
	Model        string      `json:"model,omitempty"`
}

func (cl *client) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	c := cl.c
	if c.Bypassed() {
		return cl.next.Chat(ctx, req)
	}
	key, err := Key(ctx, cl.baseURL, req)
	if err != nil {
		// Unencodable requests (NaN in extra fields) are simply not cached.
		return cl.next.Chat(ctx, req)
	}
	resp, rejected, ok := c.get(ctx, key, req)
	if ok {
		c.hits.Add(1)
		return resp, nil
	}
	c.misses.Add(1)
	if rejected != nil {
		c.countRejected(rejected.reason)
	}
	resp, err = cl.next.Chat(ctx, req)
	if err != nil {
		return resp, err
	}
	resp.CacheRejected = rejected != nil
	c.put(ctx, key, req, resp, rejected != nil)
	return resp, nil
}

// get looks key up and checks what it finds against req. A found entry
// that fails a check comes back as the reason it was rejected.
func (c *Cache) get(ctx context.Context, key []byte, req llm.Request) (llm.Response, *rejectError, bool) {
	var (
		val  []byte
		size int64
		sum  []byte
	)
	since := c.opts.Now().Add(-c.opts.MaxAge).UnixNano()
	// The value is fetched only when it is within the cap: a 50 MiB entry
	// is measured in the database and never copied into memory.
	err := c.db.QueryRowContext(ctx,
		"SELECT CASE WHEN octet_length(value) <= ? THEN value END, octet_length(value), sum FROM responses WHERE key = ? AND created >= ?",
		c.opts.MaxEntryBytes, key, since).Scan(&val, &size, &sum)
	if errors.Is(err, sql.ErrNoRows) || ctx.Err() != nil {
		return llm.Response{}, nil, false
	}
	if err != nil {
		c.fail(fmt.Errorf("response cache %s: read: %w", c.path, err))
		return llm.Response{}, nil, false
	}
	if size > c.opts.MaxEntryBytes {
		return llm.Response{}, reject(RejectSize, "%d bytes stored, the cap is %d", size, c.opts.MaxEntryBytes), false
	}
	if sum == nil {
		return llm.Response{}, reject(RejectHash, "no content MAC (written by an older svbench, or the MAC was cleared)"), false
	}
	if !c.sumMatches(sum, key, val) {
		return llm.Response{}, reject(RejectHash, "content MAC mismatch (the entry was changed after it was written, or written under another key or by an older svbench)"), false
	}
	resp, rerr := decodeEntry(req, val)
	if rerr != nil {
		return llm.Response{}, rerr, false
	}
	return resp, nil, true
}

// put stores a fresh answer. One that could not be replayed is not stored;
// when it answers a rejected entry, that entry is deleted so it is not
// rejected again on every run.
func (c *Cache) put(ctx context.Context, key []byte, req llm.Request, resp llm.Response, replacesRejected bool) {
	val, err := json.Marshal(stored{Message: resp.Message, Usage: resp.Usage, FinishReason: resp.FinishReason, Model: resp.Model})
	if err != nil {
		return
	}
	storable := checkResponse(req, resp) == nil && int64(len(val)) <= c.opts.MaxEntryBytes
	if !storable {
		c.unstored.Add(1)
		if !replacesRejected {
			return
		}
	}
	// The answer is paid for: store it even if the run is being cancelled.
	ctx = context.WithoutCancel(ctx)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.broken.Load() {
		return
	}
	var old sql.NullInt64
	if err := c.db.QueryRowContext(ctx, "SELECT size FROM responses WHERE key = ?", key).Scan(&old); err != nil && !errors.Is(err, sql.ErrNoRows) {
		c.fail(fmt.Errorf("response cache %s: write: %w", c.path, err))
		return
	}
	if !storable {
		if _, err := c.db.ExecContext(ctx, "DELETE FROM responses WHERE key = ?", key); err != nil {
			c.fail(fmt.Errorf("response cache %s: write: %w", c.path, err))
			return
		}
		c.size.Add(-old.Int64)
		return
	}
	_, err = c.db.ExecContext(ctx, "INSERT OR REPLACE INTO responses(key, created, model, size, value, sum) VALUES (?, ?, ?, ?, ?, ?)",
		key, c.opts.Now().UnixNano(), req.Model, len(val), val, c.entrySum(key, val))
	if err != nil {
		c.fail(fmt.Errorf("response cache %s: write: %w", c.path, err))
		return
	}
	c.stores.Add(1)
	if c.size.Add(int64(len(val))-old.Int64) > c.opts.MaxBytes {
		if _, err := c.pruneLocked(ctx); err != nil {
			c.fail(fmt.Errorf("response cache %s: prune: %w", c.path, err))
		}
	}
}

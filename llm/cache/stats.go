package cache

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"time"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// Stats describes the cache's content.
type Stats struct {
	Path      string    `json:"path"`
	Entries   int64     `json:"entries"`
	Bytes     int64     `json:"bytes"`
	FileBytes int64     `json:"file_bytes"`
	Expired   int64     `json:"expired"`
	Oldest    time.Time `json:"oldest,omitzero"`
	Newest    time.Time `json:"newest,omitzero"`
	MaxAge    string    `json:"max_age"`
	MaxBytes  int64     `json:"max_bytes"`
	Models    []Model   `json:"models,omitempty"`
}

// Model is one model's share of the cache.
type Model struct {
	Model   string `json:"model"`
	Entries int64  `json:"entries"`
	Bytes   int64  `json:"bytes"`
}

// Stats reads the cache's content.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	s := Stats{Path: c.path, MaxAge: c.opts.MaxAge.String(), MaxBytes: c.opts.MaxBytes}
	var oldest, newest sql.NullInt64
	var bytes sql.NullInt64
	err := c.db.QueryRowContext(ctx, "SELECT COUNT(*), SUM(size), MIN(created), MAX(created) FROM responses").Scan(&s.Entries, &bytes, &oldest, &newest)
	if err != nil {
		return s, fmt.Errorf("response cache %s: %w", c.path, err)
	}
	s.Bytes = bytes.Int64
	if oldest.Valid {
		s.Oldest, s.Newest = time.Unix(0, oldest.Int64).UTC(), time.Unix(0, newest.Int64).UTC()
	}
	since := c.opts.Now().Add(-c.opts.MaxAge).UnixNano()
	if err := c.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM responses WHERE created < ?", since).Scan(&s.Expired); err != nil {
		return s, fmt.Errorf("response cache %s: %w", c.path, err)
	}
	rows, err := c.db.QueryContext(ctx, "SELECT model, COUNT(*), SUM(size) FROM responses GROUP BY model ORDER BY SUM(size) DESC LIMIT 20")
	if err != nil {
		return s, fmt.Errorf("response cache %s: %w", c.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m Model
		if err := rows.Scan(&m.Model, &m.Entries, &m.Bytes); err != nil {
			return s, err
		}
		s.Models = append(s.Models, m)
	}
	for _, p := range []string{c.path, c.path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			s.FileBytes += st.Size()
		}
	}
	return s, rows.Err()
}

// Prune removes expired entries, then the oldest until the cache is under
// 90% of its size limit, and returns how many it removed.
func (c *Cache) Prune(ctx context.Context) (int64, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.pruneLocked(ctx)
}

func (c *Cache) pruneLocked(ctx context.Context) (int64, error) {
	since := c.opts.Now().Add(-c.opts.MaxAge).UnixNano()
	res, err := c.db.ExecContext(ctx, "DELETE FROM responses WHERE created < ?", since)
	if err != nil {
		return 0, err
	}
	removed, _ := res.RowsAffected()
	var size sql.NullInt64
	if err := c.db.QueryRowContext(ctx, "SELECT SUM(size) FROM responses").Scan(&size); err != nil {
		return removed, err
	}
	target := c.opts.MaxBytes / 10 * 9
	if size.Int64 > target {
		// Walk oldest first until enough bytes are covered, then delete up
		// to that entry's time in one statement.
		cut, err := c.cutoff(ctx, size.Int64-target)
		if err != nil {
			return removed, err
		}
		res, err := c.db.ExecContext(ctx, "DELETE FROM responses WHERE created <= ?", cut)
		if err != nil {
			return removed, err
		}
		n, _ := res.RowsAffected()
		removed += n
		if err := c.db.QueryRowContext(ctx, "SELECT SUM(size) FROM responses").Scan(&size); err != nil {
			return removed, err
		}
	}
	c.size.Store(size.Int64)
	return removed, nil
}

func (c *Cache) cutoff(ctx context.Context, excess int64) (int64, error) {
	rows, err := c.db.QueryContext(ctx, "SELECT created, size FROM responses ORDER BY created")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var cut, covered int64
	for rows.Next() && covered < excess {
		var n int64
		if err := rows.Scan(&cut, &n); err != nil {
			return 0, err
		}
		covered += n
	}
	return cut, rows.Err()
}

// Clear removes every entry and returns how many there were.
func (c *Cache) Clear(ctx context.Context) (int64, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	res, err := c.db.ExecContext(ctx, "DELETE FROM responses")
	if err != nil {
		return 0, fmt.Errorf("response cache %s: %w", c.path, err)
	}
	n, _ := res.RowsAffected()
	c.size.Store(0)
	if _, err := c.db.ExecContext(ctx, "VACUUM"); err != nil {
		return n, fmt.Errorf("response cache %s: vacuum: %w", c.path, err)
	}
	return n, nil
}

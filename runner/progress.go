package runner

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Progress receives run progress. Implementations must be safe for
// concurrent use.
type Progress interface {
	Start(total, already int)
	Add(reward float64, failed bool)
	Finish()
}

type nopProgress struct{}

func (nopProgress) Start(int, int)    {}
func (nopProgress) Add(float64, bool) {}
func (nopProgress) Finish()           {}

// counters is the state every progress display shows.
type counters struct {
	mu        sync.Mutex
	total     int
	done      int
	fresh     int
	errors    int
	rewardSum float64
	start     time.Time
}

func (c *counters) snapshot() (done, total, errs int, mean, rate float64, eta time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := time.Since(c.start).Seconds()
	if el > 0 {
		rate = float64(c.fresh) / el
	}
	if c.fresh-c.errors > 0 {
		mean = c.rewardSum / float64(c.fresh-c.errors)
	}
	if rate > 0 {
		eta = time.Duration(float64(c.total-c.done) / rate * float64(time.Second))
	}
	return c.done, c.total, c.errors, mean, rate, eta
}

// BarProgress draws a progress bar with rate, ETA and running mean reward,
// for terminals.
type BarProgress struct {
	W   io.Writer
	c   counters
	bar *progressbar.ProgressBar
}

// Start implements Progress.
func (p *BarProgress) Start(total, already int) {
	p.c = counters{total: total, done: already, start: time.Now()}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.W),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("rollouts"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	_ = p.bar.Set(already)
}

// Add implements Progress.
func (p *BarProgress) Add(reward float64, failed bool) {
	p.c.mu.Lock()
	p.c.done++
	p.c.fresh++
	if failed {
		p.c.errors++
	} else {
		p.c.rewardSum += reward
	}
	p.c.mu.Unlock()
	_, _, errs, mean, _, _ := p.c.snapshot()
	p.bar.Describe(fmt.Sprintf("mean reward %.3f, errors %d", mean, errs))
	_ = p.bar.Add(1)
}

// Finish implements Progress.
func (p *BarProgress) Finish() { _ = p.bar.Finish() }

// LineProgress prints a plain status line periodically, for logs and CI.
type LineProgress struct {
	W        io.Writer
	Interval time.Duration
	c        counters
	stop     chan struct{}
	wg       sync.WaitGroup
}

// Start implements Progress.
func (p *LineProgress) Start(total, already int) {
	p.c = counters{total: total, done: already, start: time.Now()}
	if p.Interval <= 0 {
		p.Interval = 10 * time.Second
	}
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(p.Interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.print()
			}
		}
	}()
}

func (p *LineProgress) print() {
	done, total, errs, mean, rate, eta := p.c.snapshot()
	fmt.Fprintf(p.W, "progress %d/%d (%.1f%%) rate %.1f/s eta %s mean_reward %.4f errors %d\n",
		done, total, 100*float64(done)/float64(max(total, 1)), rate, eta.Round(time.Second), mean, errs)
}

// Add implements Progress.
func (p *LineProgress) Add(reward float64, failed bool) {
	p.c.mu.Lock()
	defer p.c.mu.Unlock()
	p.c.done++
	p.c.fresh++
	if failed {
		p.c.errors++
	} else {
		p.c.rewardSum += reward
	}
}

// Finish implements Progress.
func (p *LineProgress) Finish() {
	close(p.stop)
	p.wg.Wait()
	p.print()
}

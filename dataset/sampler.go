package dataset

import (
	"container/heap"
	"sort"
)

// DistinctSampler keeps a uniform random sample of at most K distinct keys
// from a stream of any length, in memory proportional to K: a bottom-K
// sketch. Each key gets a pseudo-random priority from a hash of the key (and
// the caller's seed); the sampler keeps the K smallest. Because a duplicate
// has the same priority as its first occurrence, it is either already held
// (and dropped) or above the threshold (and ignored), so the sample is
// de-duplicated exactly even though the stream is never held in memory, and
// it is a uniform sample of the distinct keys: duplicated rows are not
// over-represented. What cannot be known in constant memory is how many
// duplicates the whole stream had; Dropped counts those that reached the
// sample.
type DistinctSampler[T any] struct {
	K       int
	h       prioHeap[T]
	held    map[string]struct{}
	Seen    int64 // rows offered
	Dropped int64 // duplicates of held keys
}

type prioItem[T any] struct {
	prio uint64
	key  string
	val  T
}

type prioHeap[T any] []prioItem[T]

func (h prioHeap[T]) Len() int           { return len(h) }
func (h prioHeap[T]) Less(i, j int) bool { return h[i].prio > h[j].prio } // max-heap
func (h prioHeap[T]) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *prioHeap[T]) Push(x any)        { *h = append(*h, x.(prioItem[T])) }
func (h *prioHeap[T]) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}

// NewDistinctSampler holds at most k items.
func NewDistinctSampler[T any](k int) *DistinctSampler[T] {
	return &DistinctSampler[T]{K: k, held: map[string]struct{}{}}
}

// Wants reports whether an item with this priority and key would be kept,
// so callers can skip building values (parsing, rendering) for the vast
// majority of rows that would not.
func (s *DistinctSampler[T]) Wants(prio uint64, key string) bool {
	if s.K <= 0 {
		return false
	}
	if _, ok := s.held[key]; ok {
		return false
	}
	return len(s.h) < s.K || prio < s.h[0].prio
}

// Offer adds an item; build is called only when the item is kept. It
// reports whether the item was kept.
func (s *DistinctSampler[T]) Offer(prio uint64, key string, build func() (T, bool)) bool {
	s.Seen++
	if s.K <= 0 {
		return false
	}
	if _, ok := s.held[key]; ok {
		s.Dropped++
		return false
	}
	if len(s.h) >= s.K && prio >= s.h[0].prio {
		return false
	}
	v, ok := build()
	if !ok {
		return false
	}
	if len(s.h) >= s.K {
		old := heap.Pop(&s.h).(prioItem[T])
		delete(s.held, old.key)
	}
	heap.Push(&s.h, prioItem[T]{prio, key, v})
	s.held[key] = struct{}{}
	return true
}

// Len is the number of items held.
func (s *DistinctSampler[T]) Len() int { return len(s.h) }

// Items returns the held items in increasing priority order: any prefix of
// it is itself a uniform sample of the distinct keys.
func (s *DistinctSampler[T]) Items() []T {
	h := append(prioHeap[T](nil), s.h...)
	sort.Slice(h, func(i, j int) bool { return h[i].prio < h[j].prio })
	out := make([]T, len(h))
	for i, it := range h {
		out[i] = it.val
	}
	return out
}

// Keys returns the held keys in the same order as Items.
func (s *DistinctSampler[T]) Keys() []string {
	h := append(prioHeap[T](nil), s.h...)
	sort.Slice(h, func(i, j int) bool { return h[i].prio < h[j].prio })
	out := make([]string, len(h))
	for i, it := range h {
		out[i] = it.key
	}
	return out
}

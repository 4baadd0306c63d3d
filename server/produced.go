package server

import (
	"crypto/sha256"
	"sync"

	"github.com/svbench/svbench/env"
)

// producedCap bounds the tool outputs remembered (32 bytes and a slice
// slot each: about 12 MB at the cap), oldest forgotten first.
const producedCap = 1 << 18

// producedOutputs remembers the tool outputs svbench's NeMo Gym tool
// routes handed out, by environment and text, so /verify credits a
// function_call_output only when svbench's own tool produced it. Without
// it a response could carry a function_call_output nobody ran, listing
// the findings the rubric pays tool_observation for.
type producedOutputs struct {
	mu    sync.Mutex
	seen  map[[32]byte]int // digest -> copies held
	order [][32]byte       // oldest first, for eviction
	head  int
}

func newProducedOutputs() *producedOutputs {
	return &producedOutputs{seen: map[[32]byte]int{}}
}

func producedKey(envID, text string) [32]byte {
	h := sha256.New()
	h.Write([]byte(envID))
	h.Write([]byte{0})
	h.Write([]byte(text))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (p *producedOutputs) add(envID, text string) {
	k := producedKey(envID, text)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.order)-p.head >= producedCap {
		old := p.order[p.head]
		p.head++
		if p.seen[old]--; p.seen[old] <= 0 {
			delete(p.seen, old)
		}
		if p.head > producedCap { // compact now and then
			p.order = append([][32]byte(nil), p.order[p.head:]...)
			p.head = 0
		}
	}
	p.order = append(p.order, k)
	p.seen[k]++
}

func (p *producedOutputs) has(envID, text string) bool {
	k := producedKey(envID, text)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[k] > 0
}

// redact empties every tool message of transcript whose text no tool of
// envID produced, and answers how many it emptied. The message stays (the
// transcript keeps its shape: a call and its answer), its content does not.
func (p *producedOutputs) redact(envID string, transcript []env.Message) int {
	n := 0
	for i := range transcript {
		m := &transcript[i]
		if m.Role != env.RoleTool || m.Content == "" || (envID != "" && p.has(envID, m.Content)) {
			continue
		}
		m.Content = ""
		n++
	}
	return n
}

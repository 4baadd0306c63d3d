package policypack

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"sync"
)

//go:embed all:packs
var packsFS embed.FS

var embedded = sync.OnceValues(func() ([]*Pack, error) { return loadEmbedded(loadOptions{}) })

func loadEmbedded(opts loadOptions) ([]*Pack, error) {
	entries, err := fs.ReadDir(packsFS, "packs")
	if err != nil {
		return nil, err
	}
	var out []*Pack
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub, err := fs.Sub(packsFS, "packs/"+e.Name())
		if err != nil {
			return nil, err
		}
		p, err := loadFS(context.Background(), sub, "packs/"+e.Name(), opts)
		if err != nil {
			return nil, fmt.Errorf("embedded policy pack %s: %w", e.Name(), err)
		}
		p.source = "embedded:" + p.id
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// Embedded returns svbench's own packs, sorted by id, loaded and validated
// once. They are part of the binary and TestEmbeddedPacksLoad holds them
// valid, so a failure here is a build defect and panics.
func Embedded() []*Pack {
	ps, err := embedded()
	if err != nil {
		panic(err)
	}
	return append([]*Pack(nil), ps...)
}

// Lookup returns the embedded pack with this id.
func Lookup(id string) (*Pack, bool) {
	for _, p := range Embedded() {
		if p.id == id {
			return p, true
		}
	}
	return nil, false
}

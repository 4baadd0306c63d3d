package usage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/svbench/svbench/artifact"
)

// MaxPricesBytes bounds a prices file: it is user input read whole.
const MaxPricesBytes = 1 << 20

// Prices are per-million-token prices from a user's TOML file
// (docs/prices.example.toml shows the format). svbench ships no price list:
// prices change, and a stale built-in list would silently misprice runs.
type Prices struct {
	// Date says when the prices were copied from the provider (YYYY-MM-DD).
	Date     string           `toml:"date"`
	Currency string           `toml:"currency"`
	Models   map[string]Price `toml:"models"`
	// File is where the prices were read from.
	File string `toml:"-"`
}

// Price is one model's price per million tokens. Reasoning tokens are part
// of the completion tokens and billed at Output, as OpenAI-compatible
// providers bill them.
type Price struct {
	Input  float64 `toml:"input"`
	Output float64 `toml:"output"`
}

var datePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// LoadPrices reads and checks a prices file.
func LoadPrices(path string) (*Prices, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxPricesBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--prices %s: %w", path, err)
	}
	p, err := ParsePrices(b)
	if err != nil {
		return nil, fmt.Errorf("--prices %s: %w", path, err)
	}
	p.File = path
	return p, nil
}

// ParsePrices decodes and checks a prices file's content: a date, a
// currency, and for each model finite, non-negative input and output
// prices. Unknown keys are refused (a typo such as "ouput" would otherwise
// price completions at 0).
func ParsePrices(b []byte) (*Prices, error) {
	if len(b) > MaxPricesBytes {
		return nil, fmt.Errorf("larger than %d bytes: not a prices file", MaxPricesBytes)
	}
	if bytes.IndexByte(b, 0) >= 0 {
		return nil, errors.New("contains NUL bytes: not a TOML file")
	}
	var p Prices
	md, err := toml.Decode(string(b), &p)
	if err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		var keys []string
		for _, k := range und {
			keys = append(keys, k.String())
		}
		slices.Sort(keys)
		return nil, fmt.Errorf("unknown key(s) %s: want date, currency and [models.\"NAME\"] tables with input and output (per million tokens)", strings.Join(keys, ", "))
	}
	if !datePattern.MatchString(p.Date) {
		return nil, fmt.Errorf("date = %q: want the day the prices were copied, as YYYY-MM-DD (prices go stale; the date travels with every cost)", p.Date)
	}
	if p.Currency == "" {
		return nil, errors.New(`currency missing: add e.g. currency = "USD"`)
	}
	if len(p.Currency) > 8 {
		return nil, fmt.Errorf("currency %q: want a short code such as USD", p.Currency)
	}
	if len(p.Models) == 0 {
		return nil, errors.New(`no models: add [models."NAME"] tables with input and output prices per million tokens`)
	}
	for name, pr := range p.Models {
		for _, v := range []struct {
			field string
			x     float64
		}{{"input", pr.Input}, {"output", pr.Output}} {
			if math.IsNaN(v.x) || math.IsInf(v.x, 0) || v.x < 0 {
				return nil, fmt.Errorf("models.%q.%s = %v: want a finite price ≥ 0 per million tokens", name, v.field, v.x)
			}
		}
	}
	return &p, nil
}

// Lookup finds a model's price by its exact name, then without a provider
// prefix ("openai/gpt-4.1" → "gpt-4.1").
func (p *Prices) Lookup(model string) (Price, bool) {
	if p == nil {
		return Price{}, false
	}
	if pr, ok := p.Models[model]; ok {
		return pr, true
	}
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		pr, ok := p.Models[model[i+1:]]
		return pr, ok
	}
	return Price{}, false
}

// Apply prices each entry in place and returns the run's cost; nil when p
// is nil. Cached calls cost nothing: the run did not pay for them.
func (p *Prices) Apply(us []artifact.ModelUsage) *artifact.Cost {
	if p == nil {
		return nil
	}
	c := &artifact.Cost{Currency: p.Currency, PricesFile: p.File, PricesDate: p.Date}
	for i := range us {
		u := &us[i]
		pr, ok := p.Lookup(u.Model)
		if !ok {
			if u.Usage.TotalTokens > 0 || u.Usage.PromptTokens > 0 || u.Usage.CompletionTokens > 0 {
				c.Unpriced = append(c.Unpriced, u.Model)
			}
			u.Cost = nil
			continue
		}
		v := (float64(u.Usage.PromptTokens)*pr.Input + float64(u.Usage.CompletionTokens)*pr.Output) / 1e6
		u.Cost = &v
		c.Total += v
	}
	slices.Sort(c.Unpriced)
	c.Unpriced = slices.Compact(c.Unpriced)
	return c
}

// FormatCost renders an amount with enough digits for sub-cent runs.
func FormatCost(v float64, currency string) string {
	switch {
	case v == 0:
		return "0 " + currency
	case v < 0.01:
		return fmt.Sprintf("%.6f %s", v, currency)
	case v < 100:
		return fmt.Sprintf("%.4f %s", v, currency)
	}
	return fmt.Sprintf("%.2f %s", v, currency)
}

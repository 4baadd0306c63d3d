package env

import (
	"encoding/json"
	"fmt"
)

// Rehydrate rebuilds an example that crossed a process boundary (decoded
// from results.jsonl, sent to the server as a recorded example, ingested
// from a trainer's rows) and so lost its Payload, which is never
// serialised. The contract every environment keeps is the ParseExample
// round trip: ParseExample of an Example as the runner records it (id,
// prompt, answer, meta) gives an example that Start and Score treat
// exactly as the original. Rehydrate is that round trip, the one way
// svbench rebuilds a payload; an example that still has one is returned
// as it is.
func Rehydrate(e Environment, ex Example) (Example, error) {
	if ex.Payload != nil {
		return ex, nil
	}
	raw, err := json.Marshal(ex)
	if err != nil {
		return Example{}, fmt.Errorf("example %s: %w", ex.ID, err)
	}
	back, err := e.ParseExample(raw)
	if err != nil {
		return Example{}, fmt.Errorf("example %s does not parse back as a %s example: %w", ex.ID, e.Info().ID, err)
	}
	return back, nil
}

// PayloadOf returns the example's payload as the environment's own type
// T, rebuilding it with Rehydrate when the example lost it, so Start and
// Score accept recorded examples without a rebuild of their own.
func PayloadOf[T any](e Environment, ex Example) (T, error) {
	if p, ok := ex.Payload.(T); ok {
		return p, nil
	}
	var zero T
	if ex.Payload != nil {
		// Another environment's payload: parsing the row again would hide
		// that the example was handed to the wrong environment.
		return zero, fmt.Errorf("example %s carries a payload of type %T, not %s's", ex.ID, ex.Payload, e.Info().ID)
	}
	back, err := Rehydrate(e, ex)
	if err != nil {
		return zero, err
	}
	p, ok := back.Payload.(T)
	if !ok {
		return zero, fmt.Errorf("example %s: %s's ParseExample gave no payload of type %T", ex.ID, e.Info().ID, zero)
	}
	return p, nil
}

package phishing

import (
	"context"
	"encoding/json"
	"math"
	"sort"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"
)

// PolicyIndicators is the built-in baseline `builtin:indicators`.
const PolicyIndicators = "indicators"

// Policy returns a built-in baseline by name.
func (e *Environment) Policy(name string) (env.Policy, bool) {
	if name != PolicyIndicators {
		return nil, false
	}
	return env.PolicyFunc(func(_ context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
		v := Classify(mail.Analyze(EmailFromPrompt(conv)))
		b, err := json.Marshal(v)
		if err != nil {
			return env.Message{}, err
		}
		return env.Message{Role: env.RoleAssistant, Content: string(b)}, nil
	}), true
}

// weights are hand-set log-odds per indicator type present (a second hit
// of the same content type adds a quarter, capped), chosen so each strong
// technical sign alone crosses the threshold and content language alone
// does not. Platt-scaled below on the generated corpus.
var weights = map[string]float64{
	mail.TypeDisplayNameSpoof:   2.6,
	mail.TypeSenderLookalike:    3.0,
	mail.TypeReplyToMismatch:    1.6,
	mail.TypeReturnPathMismatch: 0.8,
	mail.TypeAuthFailure:        1.4,
	mail.TypeLookalikeDomain:    3.0,
	mail.TypeIPURL:              2.6,
	mail.TypeShortener:          1.6,
	mail.TypeLinkMismatch:       2.6,
	mail.TypeCredentialURL:      1.8,
	mail.TypeCredentialForm:     3.0,
	mail.TypeRiskyAttachment:    2.6,
	mail.TypeDoubleExtension:    3.5,
	mail.TypeCredentialRequest:  1.4,
	mail.TypePaymentRequest:     1.1,
	mail.TypeGiftCard:           2.2,
	mail.TypeUrgency:            0.7,
	mail.TypeThreat:             1.0,
}

const (
	bias          = -2.6
	wAuthPass     = -1.6
	wLinksAligned = -0.8
	wContentMix   = 1.0
	// Platt scaling of the raw log-odds, fitted by logistic regression on
	// 3,000 rows of train's template families (seed 1234; TestPlattSlope
	// refits it; ECE 0.059 unscaled → 0.039 at this slope with generator
	// e4-gen/3, whose clones carry less pressure language than e4-gen/2's
	// texts; 0.81 was the fit on e4-gen/2, 0.72 on e4-gen/1). The bias is
	// pinned at 0: fitted, it learns the generator's mix of signals (+2.2
	// with the slope at 1.37 on e4-gen/2, +15 on e4-gen/1, whose
	// legitimate rows all passed authentication), not anything that holds
	// for imported mail.
	plattA = 0.66
	plattB = 0.0
	// abstainBand: probabilities this close to ½ abstain.
	abstainBand = 0.06
)

// Verdict is the baseline's answer.
type Verdict struct {
	Label      string  `json:"label"`
	Confidence float64 `json:"confidence"`
	Evidence   []Item  `json:"evidence"`
}

// Score returns the probability that the analysed message is phishing.
func Score(a *mail.Analysis) float64 {
	return 1 / (1 + math.Exp(-(plattA*logOdds(a) + plattB)))
}

// logOdds is the hand-set score before Platt scaling.
func logOdds(a *mail.Analysis) float64 {
	z := bias
	count := map[string]int{}
	for _, in := range a.Indicators {
		count[in.Type]++
	}
	for _, t := range mail.Types { // fixed order: the sum is bit-for-bit reproducible
		n := count[t]
		if n == 0 {
			continue
		}
		w := weights[t]
		z += w * (1 + 0.25*float64(min(n-1, 2)))
	}
	// Several kinds of pressure in one message (credentials + threat +
	// urgency) are rare in real mail even when the sender checks out.
	if k := count[mail.TypeCredentialRequest] + count[mail.TypePaymentRequest] + count[mail.TypeGiftCard] + count[mail.TypeThreat] + count[mail.TypeUrgency]; k > 0 {
		kinds := 0
		for _, t := range []string{mail.TypeCredentialRequest, mail.TypePaymentRequest, mail.TypeGiftCard, mail.TypeThreat, mail.TypeUrgency} {
			if count[t] > 0 {
				kinds++
			}
		}
		if kinds >= 3 {
			z += wContentMix * float64(kinds-2)
		}
	}
	// Only a pass for the From domain, and for a From domain that is not
	// itself a look-alike or free mail, speaks for the sender: attackers
	// authenticate the domains they register, and an ESP's signature says
	// nothing about who wrote the mail.
	if a.Signals.AuthTrusted {
		z += wAuthPass
	}
	if a.Signals.LinksAligned {
		z += wLinksAligned
	}
	return z
}

// Classify turns an analysis into the answer JSON.
func Classify(a *mail.Analysis) Verdict {
	p := Score(a)
	v := Verdict{Evidence: []Item{}}
	switch {
	case math.Abs(p-0.5) < abstainBand:
		v.Label, v.Confidence = LabelAbstain, 0.5
	case p >= 0.5:
		v.Label, v.Confidence = LabelPhishing, p
	default:
		v.Label, v.Confidence = LabelLegitimate, 1-p
	}
	v.Confidence = math.Round(v.Confidence*1000) / 1000
	if v.Label != LabelPhishing {
		return v
	}
	// Evidence: the strongest indicators, one per value, at most 8.
	ins := append([]mail.Indicator(nil), a.Indicators...)
	sort.SliceStable(ins, func(i, j int) bool { return weights[ins[i].Type] > weights[ins[j].Type] })
	for _, in := range ins {
		if len(v.Evidence) == 8 {
			break
		}
		v.Evidence = append(v.Evidence, Item{Type: in.Type, Value: in.Value, Typed: true})
	}
	return v
}

package phishing

import (
	"flag"
	"math"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"
	"github.com/svbench/svbench/metrics"
)

var refitPlatt = flag.Bool("refit-platt", false, "fit the baseline's Platt slope on generated rows and log it")

// Rows the baseline's Platt slope is fitted on: a seed no split, test or
// data set uses, and train's template families only, so the baseline is
// tuned on no template the test set uses.
const (
	plattSeed = 1234
	plattRows = 3000
)

// fitPlattSlope maximises the likelihood of labels under
// P(phishing) = σ(a·z) by Newton's method, the bias pinned at 0 (see plattB).
func fitPlattSlope(zs []float64, ys []float64) float64 {
	a := 1.0
	for range 100 {
		var g, h float64
		for i, z := range zs {
			p := 1 / (1 + math.Exp(-a*z))
			g += (ys[i] - p) * z
			h += p * (1 - p) * z * z
		}
		if h == 0 {
			break
		}
		step := g / h
		a += step
		if math.Abs(step) < 1e-9 {
			break
		}
	}
	return a
}

// eceWithSlope is the ECE of the baseline's answers on rows had plattA
// been slope: abstentions within abstainBand are left out, as
// TestBaselineCalibration leaves them out.
func eceWithSlope(zs, ys []float64, slope float64) float64 {
	var cal metrics.Calibration
	for i, z := range zs {
		p := 1 / (1 + math.Exp(-(slope*z + plattB)))
		if math.Abs(p-0.5) < abstainBand {
			continue
		}
		conf, phish := p, p >= 0.5
		if !phish {
			conf = 1 - p
		}
		conf = math.Round(conf*1000) / 1000
		cal.Add(conf, phish == (ys[i] == 1))
	}
	return cal.ECE()
}

// TestPlattSlope refits plattA the way it was fitted and fails when the
// constant has drifted from the fit (weights, extractor or generator
// changed): run with -refit-platt to see the fit and update plattA.
func TestPlattSlope(t *testing.T) {
	var zs, ys []float64
	rows, err := GenerateSplit(env.SplitTrain, plattSeed, plattRows)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		zs = append(zs, logOdds(mail.Analyze(r.Email)))
		y := 0.0
		if r.Answer == LabelPhishing {
			y = 1
		}
		ys = append(ys, y)
	}
	a := fitPlattSlope(zs, ys)
	if *refitPlatt {
		t.Logf("fitted slope %.4f on %d rows (seed %d): ECE %.4f unscaled, %.4f at the fit, %.4f at plattA %.2f",
			a, plattRows, plattSeed, eceWithSlope(zs, ys, 1), eceWithSlope(zs, ys, a), eceWithSlope(zs, ys, plattA), plattA)
	}
	if math.Abs(a-plattA) > 0.02 {
		t.Errorf("the Platt slope fitted on %d generated rows (seed %d) is %.3f, plattA is %.2f: update plattA (run with -refit-platt)", plattRows, plattSeed, a, plattA)
	}
}

package phishing

import (
	"testing"
	"time"

	"github.com/svbench/svbench/envs/phishing/mail"
)

// BenchmarkExtractAndScore measures parsing + indicator extraction + the
// baseline's scoring on the generated corpus (target ≥ 5,000 emails/s per
// core). The reference's keyword-only indicator recipe runs alongside as
// the cost of doing (much) less.
func BenchmarkExtractAndScore(b *testing.B) {
	rows := Generate(7, 1200)
	bytes := 0
	for _, r := range rows {
		bytes += len(r.Email)
	}
	b.Run("svbench", func(b *testing.B) {
		b.SetBytes(int64(bytes / len(rows)))
		start, cpu0 := time.Now(), cpuTime()
		for i := 0; i < b.N; i++ {
			_ = Score(mail.Analyze(rows[i%len(rows)].Email))
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "emails/s")
		// On a shared machine wall time understates a core's throughput;
		// process CPU time (GC included) measures it directly.
		b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "emails/cpu-s")
	})
	b.Run("reference-keywords", func(b *testing.B) {
		start, cpu0 := time.Now(), cpuTime()
		for i := 0; i < b.N; i++ {
			_ = ReferenceIndicators(rows[i%len(rows)].Email)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "emails/s")
		b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "emails/cpu-s")
	})
}

// BenchmarkScoreCompletion measures rubric scoring of one completion with
// evidence (the reward-server hot path), payload analysis cached.
func BenchmarkScoreCompletion(b *testing.B) {
	ex, err := New().ParseExample([]byte(phishRow))
	if err != nil {
		b.Fatal(err)
	}
	p := ex.Payload.(*payload)
	out := `{"label":"Phishing","confidence":0.9,"evidence":[{"type":"url_shortener","value":"http://bit.ly/x7Yq"},{"type":"urgency","value":"within 24 hours"}]}`
	for i := 0; i < b.N; i++ {
		if _, err := scoreText(p, out, RubricDefault); err != nil {
			b.Fatal(err)
		}
	}
}

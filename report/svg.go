package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/metrics"
)

// The charts are plain SVG 1.1 written by hand: no dependency, no script,
// every text node escaped, so a label taken from data cannot inject markup.

const (
	colBlue   = "#4C78A8"
	colOrange = "#F58518"
	colGrid   = "#E3E3E3"
	colAxis   = "#444444"
	colMuted  = "#777777"
	colInk    = "#222222"
	fontStack = "Helvetica, Arial, sans-serif"
)

type canvas struct {
	b    bytes.Buffer
	w, h float64
}

func newCanvas(w, h float64, title string) *canvas {
	c := &canvas{w: w, h: h}
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="%s" font-size="12">`+"\n", w, h, w, h, fontStack)
	c.b.WriteString("<title>")
	c.esc(title)
	c.b.WriteString("</title>\n")
	fmt.Fprintf(&c.b, `<rect x="0" y="0" width="%g" height="%g" fill="#FFFFFF"/>`+"\n", w, h)
	c.text(w/2, 24, title, `text-anchor="middle" font-size="15" font-weight="bold" fill="`+colInk+`"`)
	return c
}

func (c *canvas) esc(s string) {
	// xml.EscapeText only fails when the writer does; bytes.Buffer does not.
	_ = xml.EscapeText(&c.b, []byte(s))
}

// text writes an escaped text node; attrs are constants from this file.
func (c *canvas) text(x, y float64, s, attrs string) {
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" %s>`, x, y, attrs)
	c.esc(s)
	c.b.WriteString("</text>\n")
}

func (c *canvas) line(x1, y1, x2, y2 float64, attrs string) {
	fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>`+"\n", x1, y1, x2, y2, attrs)
}

func (c *canvas) rect(x, y, w, h float64, attrs string) {
	fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s/>`+"\n", x, y, math.Max(w, 0), math.Max(h, 0), attrs)
}

func (c *canvas) bytes() []byte {
	c.b.WriteString("</svg>\n")
	return c.b.Bytes()
}

// plot is a unit-square data area mapped onto the canvas.
type plot struct {
	x0, y0, w, h float64
}

func (p plot) X(v float64) float64 { return p.x0 + clamp01(v)*p.w }
func (p plot) Y(v float64) float64 { return p.y0 + p.h - clamp01(v)*p.h }

func clamp01(v float64) float64 { return metrics.ClampUnit(v) }

// axes draws grid, ticks at 0, 0.2, …, 1 on both axes, and axis titles.
func (p plot) axes(c *canvas, xTitle, yTitle string) {
	for i := 0; i <= 5; i++ {
		v := float64(i) / 5
		label := fmt.Sprintf("%.1f", v)
		c.line(p.X(v), p.y0, p.X(v), p.y0+p.h, `stroke="`+colGrid+`" stroke-width="1"`)
		c.line(p.x0, p.Y(v), p.x0+p.w, p.Y(v), `stroke="`+colGrid+`" stroke-width="1"`)
		c.line(p.X(v), p.y0+p.h, p.X(v), p.y0+p.h+5, `stroke="`+colAxis+`"`)
		c.line(p.x0-5, p.Y(v), p.x0, p.Y(v), `stroke="`+colAxis+`"`)
		c.text(p.X(v), p.y0+p.h+19, label, `text-anchor="middle" fill="`+colAxis+`"`)
		c.text(p.x0-9, p.Y(v)+4, label, `text-anchor="end" fill="`+colAxis+`"`)
	}
	c.line(p.x0, p.y0+p.h, p.x0+p.w, p.y0+p.h, `stroke="`+colAxis+`" stroke-width="1.2"`)
	c.line(p.x0, p.y0, p.x0, p.y0+p.h, `stroke="`+colAxis+`" stroke-width="1.2"`)
	c.text(p.x0+p.w/2, p.y0+p.h+40, xTitle, `text-anchor="middle" font-size="13" fill="`+colInk+`"`)
	yx, yy := p.x0-44, p.y0+p.h/2
	c.text(yx, yy, yTitle, fmt.Sprintf(`text-anchor="middle" font-size="13" fill="%s" transform="rotate(-90 %.1f %.1f)"`, colInk, yx, yy))
}

// legend draws swatches in a row starting at (x, y).
func legend(c *canvas, x, y float64, items []legendItem) {
	for _, it := range items {
		switch it.kind {
		case "bar":
			c.rect(x, y-9, 14, 10, `fill="`+it.color+`"`)
		case "dash":
			c.line(x, y-4, x+14, y-4, `stroke="`+it.color+`" stroke-width="1.5" stroke-dasharray="4 3"`)
		default:
			c.line(x, y-4, x+14, y-4, `stroke="`+it.color+`" stroke-width="3"`)
		}
		c.text(x+19, y, it.label, `fill="`+colInk+`" font-size="11"`)
		x += 19 + 6.5*float64(len(it.label)) + 16
	}
}

type legendItem struct{ kind, color, label string }

// ReliabilityDiagram draws accuracy per confidence bin as bars, each bin's
// mean confidence as an orange tick, the diagonal of perfect calibration
// and the row count of each bin.
func ReliabilityDiagram(title string, bins []metrics.Bin) []byte {
	c := newCanvas(540, 460, title)
	p := plot{x0: 72, y0: 70, w: 440, h: 320}
	p.axes(c, "Confidence", "Accuracy")
	legend(c, p.x0, 50, []legendItem{
		{"bar", colBlue, "accuracy"}, {"line", colOrange, "mean confidence"}, {"dash", colMuted, "perfect calibration"},
	})
	for _, b := range bins {
		if b.Count == 0 {
			continue
		}
		x1, x2 := p.X(b.Lo)+3, p.X(b.Hi)-3
		c.rect(x1, p.Y(b.Accuracy), x2-x1, p.Y(0)-p.Y(b.Accuracy), `fill="`+colBlue+`" fill-opacity="0.85"`)
		c.line(x1, p.Y(b.MeanConfidence), x2, p.Y(b.MeanConfidence), `stroke="`+colOrange+`" stroke-width="3"`)
		// The count sits inside the bar's foot, where it never collides
		// with the title, legend or a neighbour.
		// A bar too short to hold it gets the count just above instead.
		if p.Y(0)-p.Y(b.Accuracy) >= 16 {
			c.text((x1+x2)/2, p.Y(0)-6, fmt.Sprintf("n=%d", b.Count), `text-anchor="middle" font-size="10" fill="#FFFFFF"`)
		} else {
			c.text((x1+x2)/2, p.Y(b.Accuracy)-4, fmt.Sprintf("n=%d", b.Count), `text-anchor="middle" font-size="10" fill="`+colInk+`"`)
		}
	}
	c.line(p.X(0), p.Y(0), p.X(1), p.Y(1), `stroke="`+colMuted+`" stroke-width="1.5" stroke-dasharray="6 4"`)
	return c.bytes()
}

// RiskCoverageChart draws the error rate among predictions kept at each
// confidence threshold against the share kept. Thresholds nobody reaches
// have coverage 0 and risk 0 (the reference's convention, which the AURC
// integrates); that drop is drawn dashed.
func RiskCoverageChart(title string, pts []metrics.RCPoint) []byte {
	c := newCanvas(540, 460, title)
	p := plot{x0: 72, y0: 70, w: 440, h: 320}
	p.axes(c, "Coverage (share of decided rows kept)", "Risk (error rate)")
	var live []metrics.RCPoint
	drop := false
	for _, q := range pts {
		if q.Count > 0 {
			live = append(live, q)
		} else {
			drop = true
		}
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].Coverage < live[j].Coverage })
	if len(live) > 0 {
		var path bytes.Buffer
		fmt.Fprintf(&path, "M%.1f %.1f", p.X(live[0].Coverage), p.Y(0))
		for _, q := range live {
			fmt.Fprintf(&path, " L%.1f %.1f", p.X(q.Coverage), p.Y(q.Risk))
		}
		fmt.Fprintf(&path, " L%.1f %.1f Z", p.X(live[len(live)-1].Coverage), p.Y(0))
		fmt.Fprintf(&c.b, `<path d="%s" fill="%s" fill-opacity="0.15" stroke="none"/>`+"\n", path.String(), colBlue)
		var pl bytes.Buffer
		for i, q := range live {
			if i > 0 {
				pl.WriteByte(' ')
			}
			fmt.Fprintf(&pl, "%.1f,%.1f", p.X(q.Coverage), p.Y(q.Risk))
		}
		fmt.Fprintf(&c.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2.2" stroke-linejoin="round"/>`+"\n", pl.String(), colBlue)
		if drop {
			c.line(p.X(live[0].Coverage), p.Y(live[0].Risk), p.X(0), p.Y(0), `stroke="`+colBlue+`" stroke-width="1.2" stroke-dasharray="4 3"`)
		}
		last := live[len(live)-1]
		for i, q := range live {
			if i > 0 && q.Coverage == live[i-1].Coverage {
				continue
			}
			fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", p.X(q.Coverage), p.Y(q.Risk), colBlue)
		}
		c.line(p.X(0), p.Y(last.Risk), p.X(1), p.Y(last.Risk), `stroke="`+colOrange+`" stroke-width="1.2" stroke-dasharray="6 4"`)
		legend(c, p.x0, 50, []legendItem{
			{"line", colBlue, "risk at threshold"}, {"dash", colOrange, fmt.Sprintf("full-coverage risk %.3f", last.Risk)},
		})
	} else {
		c.text(p.x0+p.w/2, p.y0+p.h/2, "no decided predictions", `text-anchor="middle" fill="`+colMuted+`"`)
	}
	return c.bytes()
}

// ConfusionHeatmap draws counts[i][j] (actual rowLabels[i], predicted
// colLabels[j]) shaded by count, with each cell's share of its row.
func ConfusionHeatmap(title string, rowLabels, colLabels []string, counts [][]int) []byte {
	const cw, ch, left, top = 120.0, 76.0, 130.0, 96.0
	w := left + cw*float64(len(colLabels)) + 30
	h := top + ch*float64(len(rowLabels)) + 40
	c := newCanvas(math.Max(w, 360), h, title)
	peak := 0
	for _, r := range counts {
		for _, v := range r {
			peak = max(peak, v)
		}
	}
	c.text(left+cw*float64(len(colLabels))/2, 54, "Predicted", `text-anchor="middle" font-size="13" font-weight="bold" fill="`+colInk+`"`)
	ax, ay := 28.0, top+ch*float64(len(rowLabels))/2
	c.text(ax, ay, "Actual", fmt.Sprintf(`text-anchor="middle" font-size="13" font-weight="bold" fill="%s" transform="rotate(-90 %.1f %.1f)"`, colInk, ax, ay))
	for j, l := range colLabels {
		c.text(left+cw*float64(j)+cw/2, top-12, l, `text-anchor="middle" fill="`+colInk+`"`)
	}
	for i, l := range rowLabels {
		c.text(left-12, top+ch*float64(i)+ch/2+4, l, `text-anchor="end" fill="`+colInk+`"`)
		rowTotal := 0
		if i < len(counts) {
			for _, v := range counts[i] {
				rowTotal += v
			}
		}
		for j := range colLabels {
			v := 0
			if i < len(counts) && j < len(counts[i]) {
				v = counts[i][j]
			}
			t := metrics.Div(float64(v), float64(peak))
			x, y := left+cw*float64(j), top+ch*float64(i)
			c.rect(x, y, cw, ch, fmt.Sprintf(`fill="%s" stroke="#FFFFFF" stroke-width="2"`, shade(t)))
			ink := colInk
			if t > 0.55 {
				ink = "#FFFFFF"
			}
			c.text(x+cw/2, y+ch/2, fmt.Sprint(v), `text-anchor="middle" font-size="18" font-weight="bold" fill="`+ink+`"`)
			c.text(x+cw/2, y+ch/2+18, Pct(metrics.Div(float64(v), float64(rowTotal)))+" of row", `text-anchor="middle" font-size="11" fill="`+ink+`"`)
		}
	}
	return c.bytes()
}

// shade interpolates from near-white to colBlue's dark variant.
func shade(t float64) string {
	t = clamp01(t)
	from := [3]float64{0xF4, 0xF7, 0xFB}
	to := [3]float64{0x1F, 0x4E, 0x79}
	var rgb [3]int
	for k := range rgb {
		rgb[k] = int(math.Round(from[k] + (to[k]-from[k])*t))
	}
	return fmt.Sprintf("#%02X%02X%02X", rgb[0], rgb[1], rgb[2])
}

// BarChart draws one horizontal bar per label with its value and, when
// counts is given, the number of rows behind it ("n=…"), over a value axis
// with ticks and a title (0–1 when unit is set).
func BarChart(title, valueTitle string, labels []string, values []float64, counts []int, unit bool) []byte {
	const left, barH, gap, top = 180.0, 22.0, 8.0, 56.0
	n := len(labels)
	axisY := top + float64(n)*(barH+gap)
	h := axisY + 58
	c := newCanvas(640, math.Max(h, 140), title)
	peak := 0.0
	for _, v := range values {
		peak = math.Max(peak, v)
	}
	if unit && peak <= 1 {
		peak = 1
	}
	if peak <= 0 {
		peak = 1
	}
	width := 640 - left - 130
	for t := 0; t <= 4; t++ {
		f := float64(t) / 4
		x := left + width*f
		c.line(x, top-4, x, axisY, `stroke="`+colGrid+`" stroke-width="1"`)
		c.line(x, axisY, x, axisY+5, `stroke="`+colAxis+`"`)
		c.text(x, axisY+18, fmt.Sprintf("%.3g", f*peak), `text-anchor="middle" fill="`+colAxis+`" font-size="11"`)
	}
	for i, l := range labels {
		v := 0.0
		if i < len(values) {
			v = values[i]
		}
		y := top + float64(i)*(barH+gap)
		l = clip.Within(l, 26, clip.Ellipsis)
		c.text(left-10, y+barH/2+4, l, `text-anchor="end" fill="`+colInk+`"`)
		c.rect(left, y, width*metrics.Div(math.Max(v, 0), peak), barH, `fill="`+colBlue+`"`)
		label := fmt.Sprintf("%.3g", v)
		if i < len(counts) {
			label += fmt.Sprintf("  (n=%d)", counts[i])
		}
		c.text(left+width*metrics.Div(math.Max(v, 0), peak)+6, y+barH/2+4, label, `fill="`+colInk+`" font-size="11"`)
	}
	c.line(left, top-4, left, axisY, `stroke="`+colAxis+`" stroke-width="1.2"`)
	c.line(left, axisY, left+width, axisY, `stroke="`+colAxis+`" stroke-width="1.2"`)
	c.text(left+width/2, axisY+40, valueTitle, `text-anchor="middle" font-size="13" fill="`+colInk+`"`)
	return c.bytes()
}

// WithSubtitle adds a second title line (the model and environment) to a
// chart drawn by this file, and to its <title>, so a chart copied out of its
// report still says what it shows.
func WithSubtitle(svg []byte, sub string) []byte {
	var esc bytes.Buffer
	_ = xml.EscapeText(&esc, []byte(sub))
	out := bytes.Replace(svg, []byte("</title>"), append([]byte(" — "+esc.String()), []byte("</title>")...), 1)
	// Bottom right, below every chart's axis titles and legends.
	var w, h float64
	if i := bytes.Index(svg, []byte("<svg ")); i >= 0 {
		_, _ = fmt.Sscanf(string(svg[i:]), `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g"`, &w, &h)
	}
	line := fmt.Sprintf(`<text x="%.1f" y="%.1f" text-anchor="end" font-size="10" fill="%s">%s</text>`+"\n</svg>", w-8, h-6, colMuted, esc.String())
	return bytes.Replace(out, []byte("</svg>"), []byte(line), 1)
}

// Series is one line of a LineChart; Lo and Hi, when set, draw a band.
type Series struct {
	Name         string
	Mean, Lo, Hi []float64
	Color        string
	// Points draws Mean as dots (raw per-step values) instead of a line.
	Points bool
}

// seriesColors cycle for multi-series charts.
var seriesColors = []string{colBlue, colOrange, "#2CA02C", "#D62728", "#9467BD", "#8C564B", "#E377C2", "#7F7F7F"}

// LineChart draws series over x (training steps) with shaded intervals,
// scaling both axes to the data (y to [0, 1] when unit is set), with five
// ticks per axis, axis titles and a legend.
func LineChart(title, xTitle, yTitle string, x []float64, series []Series, unit bool) []byte {
	c := newCanvas(640, 440, title)
	p := plot{x0: 78, y0: 74, w: 520, h: 290}
	xmin, xmax := minMax(x)
	ymin, ymax := 0.0, 1.0
	if !unit {
		first := true
		for _, s := range series {
			for _, vs := range [][]float64{s.Mean, s.Lo, s.Hi} {
				for _, v := range vs {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						continue
					}
					if first {
						ymin, ymax, first = v, v, false
					}
					ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
				}
			}
		}
		pad := 0.05 * math.Max(ymax-ymin, 1e-9)
		ymin, ymax = ymin-pad, ymax+pad
	}
	sx := func(v float64) float64 { return (v - xmin) / math.Max(xmax-xmin, 1e-12) }
	sy := func(v float64) float64 { return (v - ymin) / math.Max(ymax-ymin, 1e-12) }
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		c.line(p.X(f), p.y0, p.X(f), p.y0+p.h, `stroke="`+colGrid+`" stroke-width="1"`)
		c.line(p.x0, p.Y(f), p.x0+p.w, p.Y(f), `stroke="`+colGrid+`" stroke-width="1"`)
		c.text(p.X(f), p.y0+p.h+19, fmt.Sprintf("%.4g", xmin+f*(xmax-xmin)), `text-anchor="middle" fill="`+colAxis+`"`)
		c.text(p.x0-9, p.Y(f)+4, fmt.Sprintf("%.3g", ymin+f*(ymax-ymin)), `text-anchor="end" fill="`+colAxis+`"`)
	}
	c.line(p.x0, p.y0+p.h, p.x0+p.w, p.y0+p.h, `stroke="`+colAxis+`" stroke-width="1.2"`)
	c.line(p.x0, p.y0, p.x0, p.y0+p.h, `stroke="`+colAxis+`" stroke-width="1.2"`)
	c.text(p.x0+p.w/2, p.y0+p.h+40, xTitle, `text-anchor="middle" font-size="13" fill="`+colInk+`"`)
	yx, yy := p.x0-52, p.y0+p.h/2
	c.text(yx, yy, yTitle, fmt.Sprintf(`text-anchor="middle" font-size="13" fill="%s" transform="rotate(-90 %.1f %.1f)"`, colInk, yx, yy))
	var items []legendItem
	for i, s := range series {
		col := s.Color
		if col == "" {
			col = seriesColors[i%len(seriesColors)]
		}
		if len(s.Lo) == len(x) && len(s.Hi) == len(x) && len(x) > 1 {
			var pts []string
			for j := range x {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.X(sx(x[j])), p.Y(sy(s.Hi[j]))))
			}
			for j := len(x) - 1; j >= 0; j-- {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.X(sx(x[j])), p.Y(sy(s.Lo[j]))))
			}
			fmt.Fprintf(&c.b, `<polygon points="%s" fill="%s" fill-opacity="0.18" stroke="none"/>`+"\n", strings.Join(pts, " "), col)
		}
		var pts []string
		for j := range x {
			if j < len(s.Mean) && !math.IsNaN(s.Mean[j]) && !math.IsInf(s.Mean[j], 0) {
				if s.Points {
					fmt.Fprintf(&c.b, `<circle cx="%.1f" cy="%.1f" r="2.4" fill="%s" fill-opacity="0.75"/>`+"\n", p.X(sx(x[j])), p.Y(sy(s.Mean[j])), col)
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.X(sx(x[j])), p.Y(sy(s.Mean[j]))))
			}
		}
		if !s.Points {
			fmt.Fprintf(&c.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), col)
		}
		items = append(items, legendItem{color: col, label: s.Name})
	}
	legend(c, p.x0, p.y0+p.h+62, items)
	return c.bytes()
}

func minMax(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 1
	}
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	return lo, hi
}

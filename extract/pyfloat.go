package extract

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"
)

// PyFloat is Python's float(x) on a value PyMap decoded: numbers, the
// NaN/Infinity constants and bools convert; strings convert when Python's
// float literal grammar accepts them (PyFloatString); everything else
// (None, lists, objects) raises in Python, which ok=false reports. It is the
// one emulation every environment reproducing the reference's float()
// shares.
func PyFloat(v any) (f float64, ok bool) {
	switch x := v.(type) {
	case json.Number:
		return parseDecimal(string(x))
	case NonFinite:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		return PyFloatString(x)
	}
	return 0, false
}

// PyFloatString implements Python's float(str): surrounding Unicode white
// space is ignored, underscores are allowed only between digits ("0.9_0" is
// 0.9), "nan"/"inf"/"infinity" in any case with one optional sign are
// accepted, hexadecimal is not, and values out of range become ±Inf or 0 as
// in Python.
func PyFloatString(s string) (float64, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if s == "" || len(s) > 512 {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	sign := s[:len(s)-len(body)]
	if len(sign) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "nan", "inf", "infinity":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	if strings.Contains(body, "_") {
		var b strings.Builder
		for i := 0; i < len(body); i++ {
			if body[i] == '_' {
				if i == 0 || i == len(body)-1 || !isDigit(body[i-1]) || !isDigit(body[i+1]) {
					return 0, false
				}
				continue
			}
			b.WriteByte(body[i])
		}
		body = b.String()
	}
	// What remains must be the decimal grammar Python and Go share (Go
	// would also take hexadecimal and its own underscores, refused above).
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !isDigit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return 0, false
		}
	}
	return parseDecimal(sign + body)
}

// parseDecimal is strconv.ParseFloat keeping out-of-range values (±Inf,
// 0), as Python does.
func parseDecimal(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, true
		}
		return 0, false
	}
	return f, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

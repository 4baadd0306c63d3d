package configaudit

import "github.com/svbench/svbench/verify"

// normSeverity accepts the answer schema's low/med/high plus the aliases
// models use (medium, critical, info, warning, error).
func normSeverity(s string) verify.Severity { return verify.NormalizeSeverity(s) }

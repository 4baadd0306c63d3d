#!/usr/bin/env bash
# Proves the linter's layering and idiom rules bite: writes packages that
# break each rule, runs golangci-lint on them alone, and fails unless every
# planted violation (and nothing allowed) is reported. A rule that stops
# matching (a glob, a prefix list depguard reads differently) fails here
# instead of passing silently. Usage: scripts/lint-probe.sh LINT-COMMAND...
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=(base/zzlintprobe env/zzlintprobe metrics/zzlintprobe)
trap 'rm -rf "${dirs[@]}"' EXIT
mkdir -p "${dirs[@]}"
cat > base/zzlintprobe/p.go <<'GO'
package zzlintprobe

import _ "github.com/svbench/svbench/env" // want: base imports only base
GO
cat > env/zzlintprobe/p.go <<'GO'
package zzlintprobe

import (
	"sort"

	_ "github.com/svbench/svbench/base/clip"
	_ "github.com/svbench/svbench/env"
	_ "github.com/svbench/svbench/env/judgeutil"
	_ "github.com/svbench/svbench/envs/netlogs" // want: the contract builds only on base
	_ "github.com/svbench/svbench/envtest"      // want
	_ "github.com/svbench/svbench/metrics"      // want
)

func truncate(s string) string { return s[:1] }

// Use breaks the idioms.
func Use(xs []string) string {
	sort.Strings(xs)      // want: slices.Sort
	return truncate(xs[0]) // want: base/clip
}
GO
cat > metrics/zzlintprobe/p.go <<'GO'
package zzlintprobe

import _ "github.com/svbench/svbench/internal/envs" // want: internal holds the CLI
GO
out=$("$@" run ./base/zzlintprobe/ ./env/zzlintprobe/ ./metrics/zzlintprobe/ 2>&1 || true)
want=(
  "base/zzlintprobe/p.go:3:8: import 'github.com/svbench/svbench/env' is not allowed"
  "env/zzlintprobe/p.go:9:2: import 'github.com/svbench/svbench/envs/netlogs' is not allowed"
  "env/zzlintprobe/p.go:10:2: import 'github.com/svbench/svbench/envtest' is not allowed"
  "env/zzlintprobe/p.go:11:2: import 'github.com/svbench/svbench/metrics' is not allowed"
  "env/zzlintprobe/p.go:18:2: use of \`sort.Strings\` forbidden"
  "env/zzlintprobe/p.go:19:9: use of \`truncate\` forbidden"
  "metrics/zzlintprobe/p.go:3:8: import 'github.com/svbench/svbench/internal/envs' is not allowed"
)
fail=0
for w in "${want[@]}"; do
  if ! grep -qF "$w" <<<"$out"; then
    echo "lint probe: the linter did not report: $w" >&2
    fail=1
  fi
done
got=$(grep -cE '^(base|env|metrics)/zzlintprobe/p\.go:[0-9]+:[0-9]+: ' <<<"$out" || true)
if [ "$got" -ne "${#want[@]}" ]; then
  echo "lint probe: ${got} findings, want ${#want[@]}:" >&2
  fail=1
fi
if [ "$fail" -ne 0 ]; then
  echo "$out" >&2
  exit 1
fi
echo "lint probe: every planted violation reported (${#want[@]})"

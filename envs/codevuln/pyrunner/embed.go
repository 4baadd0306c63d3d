// Package pyrunner holds the Python side of E3's trusted test runs: the
// runner, the data-only bridge to the code under test, the helpers hidden
// tests import and the objects they build on the candidate's side. It is its
// own package so the task contract (taskset's trustedrun) gives tests the
// same helpers as the engine.
package pyrunner

import "embed"

// FS holds the runner's files at its root: svbench_runner.py, svbrpc.py,
// svbench_trusted.py, svbench_fixtures.py, svbench_compat.py.
//
//go:embed *.py
var FS embed.FS

// Helpers are the files a test may import in one process (the task
// contract's plain unittest run): svbench_trusted falls back to local calls
// when no runner binds it.
var Helpers = []string{"svbench_trusted.py", "svbench_fixtures.py"}

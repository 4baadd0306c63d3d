// Package envs links every built-in environment into the binary: adding an
// environment is one import line here.
package envs

import (
	_ "github.com/svbench/svbench/envs/codevuln"
	_ "github.com/svbench/svbench/envs/configaudit"
	_ "github.com/svbench/svbench/envs/netlogs"
	_ "github.com/svbench/svbench/envs/phishing"
	_ "github.com/svbench/svbench/envs/redteam"
)

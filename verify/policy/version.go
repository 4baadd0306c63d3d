package policy

import "github.com/open-policy-agent/opa/v1/version"

func opaVersion() string { return "v" + version.Version }

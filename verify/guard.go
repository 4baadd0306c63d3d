package verify

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/svbench/svbench/verify/nesting"
)

// DefaultMaxHCLBytes bounds one Terraform file for the Terraform verifiers.
// Their nesting bound is nesting.DefaultMax.
const DefaultMaxHCLBytes = 1 << 20

// GuardHCL rejects Terraform text that is too large, binary, or nested
// deeper than maxDepth levels (nesting.HCL) before a recursive-descent
// parser sees it: HCL's parser recurses once per level and a goroutine
// that outgrows its stack kills the process. A .tf.json file is measured
// as JSON too, since trivy reads it with HCL's JSON parser. Zero limits
// take the defaults.
func GuardHCL(path string, content []byte, maxBytes, maxDepth int) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxHCLBytes
	}
	if len(content) > maxBytes {
		return fmt.Errorf("%s: %d bytes exceeds the %d-byte limit for a Terraform file", path, len(content), maxBytes)
	}
	if i := bytes.IndexByte(content, 0); i >= 0 {
		return fmt.Errorf("%s:%d: NUL byte: not a Terraform text file", path, 1+bytes.Count(content[:i], []byte("\n")))
	}
	if strings.HasSuffix(strings.ToLower(path), ".json") {
		if err := nesting.JSON(path, content, maxDepth); err != nil {
			return err
		}
	}
	return nesting.HCL(path, content, maxDepth)
}

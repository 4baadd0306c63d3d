package tfscan

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/zclconf/go-cty/cty"

	adapter "github.com/aquasecurity/trivy/pkg/iac/adapters/terraform"
	"github.com/aquasecurity/trivy/pkg/iac/ignore"
	"github.com/aquasecurity/trivy/pkg/iac/scan"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/terraform/parser"
	"github.com/aquasecurity/trivy/pkg/iac/terraform"
	"github.com/aquasecurity/trivy/pkg/iac/types"
)

// scanModule is trivy's terraform ScanFS and executor for the one root
// module memFS lays out (every file flattened into "."), with the checks
// evaluated by checkSet: parse and evaluate the HCL with trivy's parser,
// adapt it to trivy's cloud state, run the checks, then apply the inline
// ignore rules the way trivy's executor does. The rendered cause trivy
// attaches to each failure is not built; nothing reads it.
func (s *Scanner) scanModule(ctx context.Context, fsys fs.FS) (scan.Results, error) {
	p := parser.New(fsys, "",
		parser.OptionWithDownloads(false),
		parser.OptionWithSkipCachedModules(true),
		parser.OptionStopOnHCLError(s.opts.StrictHCL),
	)
	if err := p.ParseFS(ctx, "."); err != nil {
		return nil, err
	}
	modules, err := p.EvaluateAll(ctx)
	if err != nil {
		return nil, err
	}
	if len(modules) == 0 {
		return nil, nil
	}
	contents, ok := adapter.Adapt(modules).ToRego().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("trivy's adapted state is not an object")
	}
	results, err := s.checks.scan(ctx, contents, ".")
	if err != nil {
		return nil, err
	}
	var rules ignore.Rules
	for _, m := range modules {
		rules = append(rules, m.Ignores()...)
	}
	results.Ignore(rules, map[string]ignore.Ignorer{
		// trivy's scanner, built without a workspace option, matches
		// workspace ignores against the empty name.
		"ws":     workspaceIgnorer(""),
		"ignore": attributeIgnorer(modules),
	})
	return results, nil
}

// workspaceIgnorer and attributeIgnorer are trivy's executor ignorers
// (unexported there): "ws:NAME" ignores by workspace, and
// "[attr=value]" ignores only when the block's attribute has that value.
func workspaceIgnorer(ws string) ignore.Ignorer {
	return func(_ types.Metadata, param any) bool {
		name, ok := param.(string)
		if !ok {
			return false
		}
		return ignore.MatchPattern(ws, name)
	}
}

func attributeIgnorer(modules terraform.Modules) ignore.Ignorer {
	return func(m types.Metadata, param any) bool {
		params, ok := param.(map[string]string)
		if !ok {
			return false
		}
		return ignoreByParams(params, modules, &m)
	}
}

func ignoreByParams(params map[string]string, modules terraform.Modules, m *types.Metadata) bool {
	if len(params) == 0 {
		return true
	}
	block := modules.GetBlockByIgnoreRange(m)
	if block == nil {
		return true
	}
	for key, want := range params {
		val := block.GetValueByPath(key)
		if val.IsNull() || !val.IsKnown() {
			return false
		}
		switch val.Type() {
		case cty.String:
			if val.AsString() != want {
				return false
			}
		case cty.Number:
			f, _ := val.AsBigFloat().Float64()
			if want != strconv.Itoa(int(f)) && want != fmt.Sprintf("%f", f) {
				return false
			}
		case cty.Bool:
			if strconv.FormatBool(val.True()) != want {
				return false
			}
		default:
			return false
		}
	}
	return true
}

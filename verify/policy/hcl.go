package policy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/svbench/svbench/verify"
)

// location is where a Terraform block starts.
type location struct {
	file string
	line int
}

// tfInput is a lint context's Terraform configuration as policy input, plus
// the location of every addressable block.
type tfInput struct {
	doc       map[string]any
	locations map[string]location // "aws_s3_bucket.logs", "data.x.y", "module.m"
}

// evalCtx evaluates attribute expressions that need no outside values.
// Functions are limited to ones whose output is bounded by their input, so
// hostile configuration cannot make evaluation blow up (no range, no file).
var evalFuncs = map[string]function.Function{
	"jsonencode": stdlib.JSONEncodeFunc,
	"jsondecode": stdlib.JSONDecodeFunc,
	"lower":      stdlib.LowerFunc,
	"upper":      stdlib.UpperFunc,
	"join":       stdlib.JoinFunc,
	"concat":     stdlib.ConcatFunc,
	"merge":      stdlib.MergeFunc,
	"tostring":   stdlib.MakeToFunc(cty.String),
	"tonumber":   stdlib.MakeToFunc(cty.Number),
	"tobool":     stdlib.MakeToFunc(cty.Bool),
	"tolist":     stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
	"toset":      stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
}

// parseTerraform converts the .tf files of one context into policy input.
// Syntax errors name the file and line.
func parseTerraform(files []verify.File, lim Limits) (*tfInput, error) {
	in := &tfInput{
		doc:       map[string]any{},
		locations: map[string]location{},
	}
	ctx := &hcl.EvalContext{Functions: evalFuncs}
	for _, f := range files {
		if err := verify.GuardHCL(f.Path, f.Content, lim.MaxHCLBytes, lim.MaxHCLDepth); err != nil {
			return nil, err
		}
		file, diags := hclsyntax.ParseConfig(f.Content, f.Path, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("invalid HCL: %s", firstError(diags))
		}
		body, ok := file.Body.(*hclsyntax.Body)
		if !ok {
			return nil, fmt.Errorf("%s: unexpected HCL body type %T", f.Path, file.Body)
		}
		for _, b := range body.Blocks {
			conv := convertBody(b.Body, f.Content, ctx)
			loc := location{file: f.Path, line: b.DefRange().Start.Line}
			switch {
			case (b.Type == "resource" || b.Type == "data") && len(b.Labels) == 2:
				root := b.Type
				setPath(in.doc, conv, root, b.Labels[0], b.Labels[1])
				addr := b.Labels[0] + "." + b.Labels[1]
				if b.Type == "data" {
					addr = "data." + addr
				}
				in.locations[addr] = loc
			case (b.Type == "module" || b.Type == "variable" || b.Type == "output") && len(b.Labels) == 1:
				setPath(in.doc, conv, b.Type, b.Labels[0])
				in.locations[b.Type+"."+b.Labels[0]] = loc
			case b.Type == "locals":
				m := child(in.doc, "locals")
				for k, v := range conv {
					m[k] = v
				}
			case b.Type == "provider" && len(b.Labels) == 1:
				prov := child(in.doc, "provider")
				list, _ := prov[b.Labels[0]].([]any)
				prov[b.Labels[0]] = append(list, conv)
			default:
				list, _ := in.doc[b.Type].([]any)
				in.doc[b.Type] = append(list, conv)
			}
		}
	}
	return in, nil
}

func child(m map[string]any, key string) map[string]any {
	c, ok := m[key].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[key] = c
	}
	return c
}

func setPath(m map[string]any, v any, keys ...string) {
	for _, k := range keys[:len(keys)-1] {
		m = child(m, k)
	}
	m[keys[len(keys)-1]] = v
}

// convertBody maps attributes to values and nested blocks to lists of bodies
// under their type name (labels, rare inside resources, are kept as
// "__labels").
func convertBody(body *hclsyntax.Body, src []byte, ctx *hcl.EvalContext) map[string]any {
	out := make(map[string]any, len(body.Attributes)+len(body.Blocks))
	for name, attr := range body.Attributes {
		out[name] = convertExpr(attr.Expr, src, ctx)
	}
	for _, b := range body.Blocks {
		conv := convertBody(b.Body, src, ctx)
		if len(b.Labels) > 0 {
			labels := make([]any, len(b.Labels))
			for i, l := range b.Labels {
				labels[i] = l
			}
			conv["__labels"] = labels
		}
		list, _ := out[b.Type].([]any)
		out[b.Type] = append(list, conv)
	}
	return out
}

// convertExpr evaluates a self-contained expression to a JSON value; an
// expression that depends on variables, resources or unknown functions
// becomes its source text, which is what a reviewer would read too.
func convertExpr(expr hclsyntax.Expression, src []byte, ctx *hcl.EvalContext) any {
	if len(expr.Variables()) == 0 {
		if v, diags := expr.Value(ctx); !diags.HasErrors() && v.IsWhollyKnown() {
			if j, err := ctyjson.Marshal(v, v.Type()); err == nil {
				dec := json.NewDecoder(bytes.NewReader(j))
				dec.UseNumber()
				var out any
				if dec.Decode(&out) == nil {
					return out
				}
			}
		}
	}
	rng := expr.Range()
	if rng.Start.Byte >= 0 && rng.End.Byte <= len(src) && rng.Start.Byte <= rng.End.Byte {
		return string(src[rng.Start.Byte:rng.End.Byte])
	}
	return ""
}

func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			if d.Subject != nil {
				return fmt.Sprintf("%s:%d: %s: %s", d.Subject.Filename, d.Subject.Start.Line, d.Summary, d.Detail)
			}
			return d.Summary + ": " + d.Detail
		}
	}
	return diags.Error()
}

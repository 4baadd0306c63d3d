package configaudit

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Network exposure is judged by the address space a rule admits, not by
// whether it spells the open range. Private, shared, loopback and
// link-local space is nobody's public network, so 10.0.0.0/8 stays an
// honest restriction. Public space is measured against the task's own
// need (netNeed): a rule restricts its sources to the networks that need
// to reach it (an office, a VPN egress, a partner), and each of those is a
// site. A site is announced on the internet as at most a /24 of IPv4 or a
// /48 of IPv6 (the longest prefixes the global routing table carries, and
// the RIRs' end-site assignment), unless the original file itself names a
// wider public block for its own networks (a partner's /20), which then is
// the unit. A set of ranges admits more than the task needs, and is the
// open range for every purpose here, when
//
//   - one of its prefixes covers more public space than one unit, whatever
//     its size: 52.0.0.0/9 is eight million addresses nobody's office
//     needs, as 0.0.0.0/2 is (the /8 bound of issue #33 paid the /9), or
//   - its prefixes together cover as much as 256 units (a /16 of IPv4 in
//     /24s, a /40 of IPv6 in /48s): a list of many sites is a list of
//     everyone.
//
// Two office /24s stay a fix; the original's own public ranges never
// count against it.
const sitesPerRuleSet = 256

var (
	siteShareV4 = math.Ldexp(1, -24)
	siteShareV6 = math.Ldexp(1, -48)
	// allocShareV4/V6 are the largest blocks one organisation was ever
	// allocated (a legacy /8; a /16 of IPv6, above the largest RIR /19s):
	// an original's public prefix at least that wide is no site of its own
	// and never widens the unit.
	allocShareV4 = math.Ldexp(1, -8)
	allocShareV6 = math.Ldexp(1, -16)
)

var (
	privateV4 = mustPrefixes("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16")
	privateV6 = mustPrefixes("fc00::/7", "fe80::/10", "::1/128")
)

// internalServiceTags are the Azure service tags that name only the
// customer's own network; every other tag (Internet, AzureCloud and its
// regional forms, Storage, …) names address space anyone can rent or
// reach from, and a tag svbench cannot resolve is open (fail closed).
var internalServiceTags = map[string]bool{"virtualnetwork": true, "azureloadbalancer": true}

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// netNeed is the widest public prefix, as a share of its address family,
// that the task's own networks take: a site, or the widest public block
// the original file names for itself.
type netNeed struct{ unit4, unit6 float64 }

// siteNeed is the need of a file that names no public block of its own.
var siteNeed = netNeed{unit4: siteShareV4, unit6: siteShareV6}

// needOf widens siteNeed to the public prefixes the original's range
// attributes name, each narrower than one organisation's allocation.
func needOf(orig map[string]tfAttr) netNeed {
	n := siteNeed
	for _, a := range orig {
		if !cidrAttributes[a.name] || a.status != valueKnown {
			continue
		}
		r, ok := rangesOf(a.name, a.value)
		if !ok {
			continue
		}
		for _, p := range r.v4 {
			if s := publicShare([]netip.Prefix{p}, privateV4); s < allocShareV4 {
				n.unit4 = max(n.unit4, s)
			}
		}
		for _, p := range r.v6 {
			if s := publicShare([]netip.Prefix{p}, privateV6); s < allocShareV6 {
				n.unit6 = max(n.unit6, s)
			}
		}
	}
	return n
}

// tooOpen reports whether ps (one family) admits more public address space
// than the need allows (see above).
func (n netNeed) tooOpen(ps []netip.Prefix, v6 bool) bool {
	private, unit := privateV4, n.unit4
	if v6 {
		private, unit = privateV6, n.unit6
	}
	total := 0.0
	for _, p := range mergePrefixes(ps) {
		s := publicShare([]netip.Prefix{p}, private)
		if s > unit {
			return true
		}
		total += s
	}
	return total >= sitesPerRuleSet*unit
}

// publicShare is the fraction of an address family ps cover outside the
// private prefixes (overlaps counted once).
func publicShare(ps []netip.Prefix, private []netip.Prefix) float64 {
	total := 0.0
	for _, p := range mergePrefixes(ps) {
		if slices.ContainsFunc(private, func(q netip.Prefix) bool { return q.Bits() <= p.Bits() && q.Contains(p.Addr()) }) {
			continue
		}
		share := math.Ldexp(1, -p.Bits())
		for _, q := range private {
			if q.Bits() > p.Bits() && p.Contains(q.Addr()) {
				share -= math.Ldexp(1, -q.Bits())
			}
		}
		total += share
	}
	return total
}

// mergePrefixes sorts ps and drops the prefixes inside another one.
func mergePrefixes(ps []netip.Prefix) []netip.Prefix {
	ps = slices.Clone(ps)
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	var kept []netip.Prefix
	for _, p := range ps {
		if n := len(kept); n > 0 && kept[n-1].Contains(p.Addr()) && kept[n-1].Bits() <= p.Bits() {
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// parseRange reads one network range (a prefix or an address); an
// IPv4-mapped IPv6 range is the IPv4 range it maps.
func parseRange(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Addr().Is4In6() {
		bits := max(p.Bits()-96, 0)
		p = netip.PrefixFrom(p.Addr().Unmap(), bits)
	}
	return p.Masked(), true
}

// prefixListRules are the rule shapes that admit sources through managed
// prefix lists: the block or resource type, the attribute naming the lists
// and the range attributes a resolved list stands for.
var prefixListRules = map[string][3]string{
	"aws_security_group":                  {"prefix_list_ids", "cidr_blocks", "ipv6_cidr_blocks"},
	"aws_security_group_rule":             {"prefix_list_ids", "cidr_blocks", "ipv6_cidr_blocks"},
	"aws_vpc_security_group_ingress_rule": {"prefix_list_id", "cidr_ipv4", "cidr_ipv6"},
	"aws_vpc_security_group_egress_rule":  {"prefix_list_id", "cidr_ipv4", "cidr_ipv6"},
}

// openPrefixLists writes the open range into every rule whose prefix lists
// admit too much: a list defined in the file (aws_ec2_managed_prefix_list)
// is judged by its entries; any other list (a literal pl- id, a data
// source, a variable) cannot be resolved here and is open, since the patch
// could name any list at all.
func openPrefixLists(pf *hclwrite.File, fns map[string]function.Function, need netNeed) []string {
	ctx := tfEvalContext(pf, fns)
	lists := map[string][]string{}
	for _, b := range pf.Body().Blocks() {
		if b.Type() != "resource" || len(b.Labels()) != 2 || b.Labels()[0] != "aws_ec2_managed_prefix_list" {
			continue
		}
		var cidrs []string
		resolved := true
		for _, e := range b.Body().Blocks() {
			if e.Type() == "dynamic" {
				resolved = false
			}
			if e.Type() != "entry" {
				continue
			}
			a := e.Body().GetAttribute("cidr")
			if a == nil {
				continue
			}
			v, st := evalTF(exprText(a), ctx)
			s, ok := stringList(v)
			if st != valueKnown || !ok {
				resolved = false
				continue
			}
			cidrs = append(cidrs, s...)
		}
		if resolved {
			lists[b.Labels()[1]] = cidrs
		}
	}
	var notes []string
	for _, res := range pf.Body().Blocks() {
		if res.Type() != "resource" || len(res.Labels()) != 2 {
			continue
		}
		shape, ok := prefixListRules[res.Labels()[0]]
		if !ok {
			continue
		}
		bodies := []*hclwrite.Body{res.Body()}
		if res.Labels()[0] == "aws_security_group" {
			bodies = nil
			for _, b := range res.Body().Blocks() {
				if b.Type() == "ingress" || b.Type() == "egress" {
					bodies = append(bodies, b.Body())
				}
			}
		}
		for _, body := range bodies {
			a := body.GetAttribute(shape[0])
			if a == nil {
				continue
			}
			v4, v6, unresolved := prefixListRanges(exprText(a), lists)
			open4 := unresolved || need.tooOpen(v4, false)
			open6 := need.tooOpen(v6, true)
			where := "resource." + strings.Join(res.Labels(), ".") + "." + shape[0]
			for _, set := range []struct {
				open  bool
				attr  string
				value string
			}{{open4, shape[1], "0.0.0.0/0"}, {open6, shape[2], "::/0"}} {
				if !set.open {
					continue
				}
				if strings.HasSuffix(set.attr, "_blocks") {
					body.SetAttributeValue(set.attr, cty.TupleVal([]cty.Value{cty.StringVal(set.value)}))
				} else {
					body.SetAttributeValue(set.attr, cty.StringVal(set.value))
				}
				why := "admit " + set.value
				if unresolved {
					why = "cannot be resolved in this file"
				}
				notes = append(notes, fmt.Sprintf("%s = %s: the prefix lists %s: %s = %q", where, oneLine(exprText(a)), why, set.attr, set.value))
			}
		}
	}
	return notes
}

// prefixListRanges resolves a prefix-list expression to the ranges of the
// lists it names; unresolved is true when any element is not a list
// defined in the file.
func prefixListRanges(text string, lists map[string][]string) (v4, v6 []netip.Prefix, unresolved bool) {
	expr, diags := hclsyntax.ParseExpression([]byte(text), "", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, nil, true
	}
	elems := []hclsyntax.Expression{expr}
	if t, ok := expr.(*hclsyntax.TupleConsExpr); ok {
		elems = t.Exprs
	}
	for _, e := range elems {
		tr, diags := hcl.AbsTraversalForExpr(e)
		if diags.HasErrors() || len(tr) < 2 || tr.RootName() != "aws_ec2_managed_prefix_list" {
			return nil, nil, true
		}
		name, ok := tr[1].(hcl.TraverseAttr)
		cidrs, known := lists[name.Name]
		if !ok || !known {
			return nil, nil, true
		}
		for _, c := range cidrs {
			p, ok := parseRange(c)
			switch {
			case !ok:
				return nil, nil, true
			case p.Addr().Is4():
				v4 = append(v4, p)
			default:
				v6 = append(v6, p)
			}
		}
	}
	return v4, v6, false
}

func exprText(a *hclwrite.Attribute) string {
	return strings.TrimSpace(string(a.Expr().BuildTokens(nil).Bytes()))
}

package configaudit

import (
	"bytes"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	sigsyaml "sigs.k8s.io/yaml"
)

// Validity: a patch that leaves a configuration Terraform would not plan,
// or a manifest the API server would refuse, fixes nothing, whatever the
// scanners say about it (a scanner skips a value of the wrong type, which
// is how `publicly_accessible = [true]` hides the finding). Checked, for
// problems the original did not already have:
//
//   - every reference resolves: resource.name, data.type.name, var.x,
//     local.x and module.x name blocks the file declares;
//   - the attributes findings read have the type their provider's schema
//     wants (tfSchema below, a subset written for the resource types the
//     corpus covers), and blocks stay blocks;
//   - every Kubernetes object of a known kind decodes strictly into its API
//     type (no unknown or duplicated field).

// Type shorthands for tfSchema.
var (
	tBool  = cty.Bool
	tNum   = cty.Number
	tStr   = cty.String
	tList  = cty.List(cty.String)
	tSet   = cty.Set(cty.String)
	tMap   = cty.Map(cty.String)
	tBlock = cty.DynamicPseudoType // a nested block, never an attribute
)

// tfSchema holds, per resource type, the type of each attribute findings
// read ("block.attr" for one inside a nested block) and which names are
// blocks.
var tfSchema = map[string]map[string]cty.Type{
	"aws_s3_bucket":                     {"bucket": tStr, "acl": tStr, "force_destroy": tBool, "tags": tMap},
	"aws_s3_bucket_acl":                 {"bucket": tStr, "acl": tStr},
	"aws_s3_bucket_public_access_block": {"bucket": tStr, "block_public_acls": tBool, "block_public_policy": tBool, "ignore_public_acls": tBool, "restrict_public_buckets": tBool},
	"aws_s3_bucket_versioning":          {"bucket": tStr, "versioning_configuration": tBlock, "versioning_configuration.status": tStr},
	"aws_s3_bucket_logging":             {"bucket": tStr, "target_bucket": tStr, "target_prefix": tStr},
	"aws_s3_bucket_server_side_encryption_configuration": {"bucket": tStr, "rule": tBlock,
		"rule.apply_server_side_encryption_by_default": tBlock, "rule.bucket_key_enabled": tBool},
	"aws_kms_key": {"description": tStr, "enable_key_rotation": tBool, "deletion_window_in_days": tNum, "is_enabled": tBool},
	"aws_security_group": {"name": tStr, "description": tStr, "vpc_id": tStr, "ingress": tBlock, "egress": tBlock,
		"ingress.from_port": tNum, "ingress.to_port": tNum, "ingress.protocol": tStr, "ingress.cidr_blocks": tList, "ingress.ipv6_cidr_blocks": tList, "ingress.prefix_list_ids": tList, "ingress.security_groups": tSet, "ingress.self": tBool, "ingress.description": tStr,
		"egress.from_port": tNum, "egress.to_port": tNum, "egress.protocol": tStr, "egress.cidr_blocks": tList, "egress.ipv6_cidr_blocks": tList, "egress.prefix_list_ids": tList, "egress.security_groups": tSet, "egress.self": tBool, "egress.description": tStr},
	"aws_security_group_rule":             {"type": tStr, "from_port": tNum, "to_port": tNum, "protocol": tStr, "cidr_blocks": tList, "ipv6_cidr_blocks": tList, "prefix_list_ids": tList, "security_group_id": tStr, "self": tBool},
	"aws_vpc_security_group_ingress_rule": {"cidr_ipv4": tStr, "cidr_ipv6": tStr, "from_port": tNum, "to_port": tNum, "ip_protocol": tStr, "prefix_list_id": tStr, "security_group_id": tStr},
	"aws_vpc_security_group_egress_rule":  {"cidr_ipv4": tStr, "cidr_ipv6": tStr, "from_port": tNum, "to_port": tNum, "ip_protocol": tStr, "prefix_list_id": tStr, "security_group_id": tStr},
	"aws_ec2_managed_prefix_list":         {"name": tStr, "address_family": tStr, "max_entries": tNum, "entry": tBlock, "entry.cidr": tStr, "entry.description": tStr},
	"aws_iam_policy":                      {"name": tStr, "description": tStr, "policy": tStr, "path": tStr},
	"aws_iam_role":                        {"name": tStr, "assume_role_policy": tStr, "managed_policy_arns": tSet, "inline_policy": tBlock, "inline_policy.policy": tStr, "max_session_duration": tNum},
	"aws_iam_role_policy":                 {"name": tStr, "role": tStr, "policy": tStr},
	"aws_iam_role_policy_attachment":      {"role": tStr, "policy_arn": tStr},
	"aws_iam_policy_attachment":           {"name": tStr, "roles": tSet, "users": tSet, "groups": tSet, "policy_arn": tStr},
	"aws_iam_user_policy_attachment":      {"user": tStr, "policy_arn": tStr},
	"aws_iam_group_policy_attachment":     {"group": tStr, "policy_arn": tStr},
	"aws_db_instance": {"identifier": tStr, "engine": tStr, "engine_version": tStr, "instance_class": tStr, "allocated_storage": tNum,
		"publicly_accessible": tBool, "storage_encrypted": tBool, "backup_retention_period": tNum, "kms_key_id": tStr, "deletion_protection": tBool,
		"iam_database_authentication_enabled": tBool, "skip_final_snapshot": tBool, "performance_insights_enabled": tBool, "manage_master_user_password": tBool,
		"multi_az": tBool, "username": tStr, "db_subnet_group_name": tStr, "final_snapshot_identifier": tStr},
	"aws_instance": {"ami": tStr, "instance_type": tStr, "subnet_id": tStr, "associate_public_ip_address": tBool, "monitoring": tBool, "ebs_optimized": tBool, "user_data": tStr, "tags": tMap,
		"metadata_options": tBlock, "metadata_options.http_tokens": tStr, "metadata_options.http_endpoint": tStr, "metadata_options.http_put_response_hop_limit": tNum,
		"root_block_device": tBlock, "root_block_device.encrypted": tBool, "root_block_device.volume_size": tNum, "root_block_device.kms_key_id": tStr,
		"ebs_block_device": tBlock, "ebs_block_device.encrypted": tBool},
	"aws_ebs_volume": {"availability_zone": tStr, "size": tNum, "encrypted": tBool, "kms_key_id": tStr, "tags": tMap},
	"aws_eks_cluster": {"name": tStr, "role_arn": tStr, "enabled_cluster_log_types": tSet, "vpc_config": tBlock,
		"vpc_config.endpoint_public_access": tBool, "vpc_config.endpoint_private_access": tBool, "vpc_config.public_access_cidrs": tSet, "vpc_config.subnet_ids": tSet,
		"encryption_config": tBlock, "encryption_config.resources": tSet, "encryption_config.provider": tBlock},
	"google_storage_bucket":             {"name": tStr, "location": tStr, "uniform_bucket_level_access": tBool, "public_access_prevention": tStr, "force_destroy": tBool, "versioning": tBlock, "versioning.enabled": tBool, "logging": tBlock},
	"google_storage_bucket_iam_member":  {"bucket": tStr, "role": tStr, "member": tStr},
	"google_storage_bucket_iam_binding": {"bucket": tStr, "role": tStr, "members": tSet},
	"google_compute_instance": {"name": tStr, "machine_type": tStr, "zone": tStr, "metadata": tMap, "can_ip_forward": tBool,
		"network_interface": tBlock, "network_interface.access_config": tBlock, "network_interface.network": tStr, "boot_disk": tBlock, "shielded_instance_config": tBlock},
	"google_compute_firewall":         {"name": tStr, "network": tStr, "direction": tStr, "priority": tNum, "source_ranges": tSet, "destination_ranges": tSet, "allow": tBlock, "allow.protocol": tStr, "allow.ports": tList, "deny": tBlock},
	"google_compute_project_metadata": {"metadata": tMap},
	"azurerm_storage_account": {"name": tStr, "location": tStr, "resource_group_name": tStr, "account_tier": tStr, "account_replication_type": tStr,
		"https_traffic_only_enabled": tBool, "enable_https_traffic_only": tBool, "min_tls_version": tStr, "allow_nested_items_to_be_public": tBool,
		"public_network_access_enabled": tBool, "network_rules": tBlock, "network_rules.default_action": tStr, "network_rules.ip_rules": tSet},
	"azurerm_storage_container": {"name": tStr, "storage_account_name": tStr, "container_access_type": tStr},
	"azurerm_linux_virtual_machine": {"name": tStr, "location": tStr, "resource_group_name": tStr, "size": tStr, "admin_username": tStr, "admin_password": tStr,
		"disable_password_authentication": tBool, "network_interface_ids": tList, "admin_ssh_key": tBlock, "os_disk": tBlock},
	"azurerm_network_security_group": {"name": tStr, "location": tStr, "resource_group_name": tStr, "security_rule": tBlock,
		"security_rule.name": tStr, "security_rule.priority": tNum, "security_rule.direction": tStr, "security_rule.access": tStr, "security_rule.protocol": tStr,
		"security_rule.source_port_range": tStr, "security_rule.destination_port_range": tStr, "security_rule.source_address_prefix": tStr,
		"security_rule.source_address_prefixes": tSet, "security_rule.destination_address_prefix": tStr, "security_rule.destination_address_prefixes": tSet},
	"data.aws_iam_policy_document": {"statement": tBlock, "statement.sid": tStr, "statement.effect": tStr, "statement.actions": tSet, "statement.not_actions": tSet,
		"statement.resources": tSet, "statement.not_resources": tSet, "statement.principals": tBlock, "statement.condition": tBlock},
	"azurerm_network_security_rule": {"name": tStr, "priority": tNum, "direction": tStr, "access": tStr, "protocol": tStr, "source_address_prefix": tStr, "source_address_prefixes": tSet,
		"destination_address_prefix": tStr, "destination_port_range": tStr, "network_security_group_name": tStr},
}

// validityProblems lists what makes a file invalid by the checks above
// (nil for a file that does not parse: the structure check refuses it).
func validityProblems(fixtureType string, content []byte) []string {
	if fixtureType == FixtureTF {
		return tfValidity(content)
	}
	return k8sValidity(content)
}

// newValidityProblems are patched's problems the original does not have.
func newValidityProblems(fixtureType string, original, patched []byte) []string {
	had := map[string]bool{}
	for _, p := range validityProblems(fixtureType, original) {
		had[p] = true
	}
	var out []string
	for _, p := range validityProblems(fixtureType, patched) {
		if !had[p] && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// tfReferenceFree are traversal roots that name no declared block.
var tfReferenceFree = map[string]bool{"each": true, "count": true, "self": true, "path": true, "terraform": true}

func tfValidity(content []byte) []string {
	f, diags := hclsyntax.ParseConfig(content, "valid.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	wf, diags := hclwrite.ParseConfig(content, "valid.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	ctx := tfEvalContext(wf, tfFunctions())
	declared := map[string]bool{}
	for _, b := range body.Blocks {
		switch {
		case (b.Type == "resource" || b.Type == "data") && len(b.Labels) == 2:
			key := b.Labels[0] + "." + b.Labels[1]
			if b.Type == "data" {
				key = "data." + key
			}
			declared[key] = true
		case (b.Type == "variable" || b.Type == "module") && len(b.Labels) == 1:
			declared[map[string]string{"variable": "var", "module": "module"}[b.Type]+"."+b.Labels[0]] = true
		case b.Type == "locals":
			for n := range b.Body.Attributes {
				declared["local."+n] = true
			}
		}
	}
	var out []string
	var walk func(b *hclsyntax.Body, where string, schema map[string]cty.Type, prefix string, iterators []string)
	walk = func(b *hclsyntax.Body, where string, sch map[string]cty.Type, prefix string, iterators []string) {
		for _, name := range slices.Sorted(maps.Keys(b.Attributes)) {
			a := b.Attributes[name]
			if name != "provider" && name != "providers" {
				for _, tr := range a.Expr.Variables() {
					if p := unresolved(tr, declared, iterators); p != "" {
						out = append(out, fmt.Sprintf("%s.%s refers to %s, which the file does not declare", where, name, p))
					}
				}
			}
			want, ok := sch[prefix+name]
			if !ok {
				continue
			}
			if want == tBlock {
				out = append(out, fmt.Sprintf("%s.%s is a block, written as an attribute", where, name))
				continue
			}
			r := a.Expr.Range()
			v, st := evalTF(string(content[r.Start.Byte:r.End.Byte]), ctx)
			if st != valueKnown || v.IsNull() {
				continue
			}
			if _, err := convert.Convert(v, want); err != nil {
				out = append(out, fmt.Sprintf("%s.%s must be %s, not %s", where, name, want.FriendlyName(), v.Type().FriendlyName()))
			}
		}
		for _, nb := range b.Blocks {
			if nb.Type == "lifecycle" {
				continue
			}
			its, typ := iterators, nb.Type
			if nb.Type == "dynamic" && len(nb.Labels) == 1 {
				typ = nb.Labels[0]
				it := typ
				if a, ok := nb.Body.Attributes["iterator"]; ok {
					if tr, diags := hcl.AbsTraversalForExpr(a.Expr); !diags.HasErrors() {
						it = tr.RootName()
					}
				}
				its = append(slices.Clone(iterators), it)
			}
			if sch != nil && nb.Type != "dynamic" && nb.Type != "content" {
				if want, ok := sch[prefix+typ]; ok && want != tBlock {
					out = append(out, fmt.Sprintf("%s.%s is an attribute, written as a block", where, typ))
				}
			}
			next := prefix
			if nb.Type != "content" {
				next = prefix + typ + "."
			}
			walk(nb.Body, where+"."+typ, sch, next, its)
		}
	}
	for _, b := range body.Blocks {
		where := b.Type + "." + strings.Join(b.Labels, ".")
		var sch map[string]cty.Type
		switch {
		case b.Type == "resource" && len(b.Labels) == 2:
			sch = tfSchema[b.Labels[0]]
		case b.Type == "data" && len(b.Labels) == 2:
			sch = tfSchema["data."+b.Labels[0]]
		}
		walk(b.Body, where, sch, "", nil)
	}
	return out
}

// unresolved returns what tr refers to when the file does not declare it.
func unresolved(tr hcl.Traversal, declared map[string]bool, iterators []string) string {
	root := tr.RootName()
	if tfReferenceFree[root] || slices.Contains(iterators, root) {
		return ""
	}
	parts := []string{root}
	for _, step := range tr[1:] {
		a, ok := step.(hcl.TraverseAttr)
		if !ok {
			break
		}
		parts = append(parts, a.Name)
	}
	n := 2
	if root == "data" {
		n = 3
	}
	if len(parts) < n {
		return strings.Join(parts, ".")
	}
	if key := strings.Join(parts[:n], "."); !declared[key] {
		return key
	}
	return ""
}

// k8sValidity decodes each object of a kind the API machinery knows
// strictly into its type.
func k8sValidity(content []byte) []string {
	docs, err := parseYAMLDocs(content)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range docs {
		var head struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		if d.Decode(&head) != nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(head.APIVersion)
		if err != nil {
			continue
		}
		obj, err := scheme.Scheme.New(gv.WithKind(head.Kind))
		if err != nil {
			continue // an unknown kind: the verifiers' unjudged check counts it
		}
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		if enc.Encode(d) != nil || enc.Close() != nil {
			continue
		}
		if err := sigsyaml.UnmarshalStrict(buf.Bytes(), obj); err != nil {
			out = append(out, fmt.Sprintf("%s %s does not decode strictly: %s", head.Kind, head.Metadata.Name, clip.Bytes(err.Error(), 200, clip.Ellipsis)))
		}
	}
	return out
}

package configaudit

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"
)

// Small yaml.v3 node helpers: mutations and the autofix policy edit the node
// tree so key order and comments survive and diffs stay minimal.

func mget(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func mpath(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = mget(m, k)
	}
	return m
}

func mset(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, strNode(key), v)
}

func mdel(m *yaml.Node, key string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		}
	}
	return false
}

// ensureMap returns m[key], creating an empty mapping when absent.
func ensureMap(m *yaml.Node, key string) *yaml.Node {
	if v := mget(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	mset(m, key, v)
	return v
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func boolNode(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(b)}
}

func intNode(n int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(n)}
}

func seqNode(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

func mapNode(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		v, ok := kv[i+1].(*yaml.Node)
		if !ok {
			v = strNode(fmt.Sprint(kv[i+1]))
		}
		m.Content = append(m.Content, strNode(kv[i].(string)), v)
	}
	return m
}

func scalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

// podSpec finds the pod template spec of a workload object, nil for other
// kinds.
func podSpec(doc *yaml.Node) *yaml.Node {
	switch scalarValue(mget(doc, "kind")) {
	case "Pod":
		return mget(doc, "spec")
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController":
		return mpath(doc, "spec", "template", "spec")
	case "CronJob":
		return mpath(doc, "spec", "jobTemplate", "spec", "template", "spec")
	}
	return nil
}

// containers lists the mapping nodes of spec.containers and initContainers.
func containers(spec *yaml.Node, withInit bool) []*yaml.Node {
	var out []*yaml.Node
	keys := []string{"containers"}
	if withInit {
		keys = append(keys, "initContainers")
	}
	for _, k := range keys {
		seq := mget(spec, k)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range seq.Content {
			if c.Kind == yaml.MappingNode {
				out = append(out, c)
			}
		}
	}
	return out
}

// renderYAML writes documents in one consistent style (2-space indent), the
// style of every generated fixture, so a node-level edit re-renders to a
// minimal textual diff.
func renderYAML(docs []*yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("render yaml: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("render yaml: %w", err)
	}
	return buf.Bytes(), nil
}

// parseYAMLDocs parses a trusted (corpus) multi-document YAML text.
func parseYAMLDocs(src []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if len(n.Content) == 0 {
			continue
		}
		docs = append(docs, n.Content[0])
	}
	return docs, nil
}

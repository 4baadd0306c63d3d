package trustedrun

import (
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

func TestRunPython(t *testing.T) {
	if msg := Toolchain(taskset.Python); msg != "" {
		t.Skip(msg)
	}
	r := New(1)
	src := map[string][]byte{"m.py": []byte("import os\n\ndef f():\n    return 1\n")}
	cases := []struct {
		name, test string
		pass       bool
	}{
		{"pass", "import unittest, m\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertEqual(m.f(), 1)\n", true},
		{"fail", "import unittest, m\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertEqual(m.f(), 2)\n", false},
		// The environment is scrubbed and HOME is inside the scratch directory.
		{"scrubbed env", "import os, unittest\nclass T(unittest.TestCase):\n    def test(self):\n        self.assertNotIn('GOFLAGS_SECRET_PROBE', os.environ)\n        self.assertTrue(os.environ['HOME'].startswith(os.path.dirname(os.getcwd())))\n", true},
	}
	t.Setenv("GOFLAGS_SECRET_PROBE", "x")
	for _, c := range cases {
		res, err := r.Run(context.Background(), taskset.Python, src, map[string][]byte{"test_x.py": []byte(c.test)})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Passed != c.pass {
			t.Errorf("%s: Passed = %v, output:\n%s", c.name, res.Passed, res.Output)
		}
		if !strings.Contains(res.Output, "Ran 1 test") {
			t.Errorf("%s: output lacks the unittest summary:\n%s", c.name, res.Output)
		}
	}
	if _, err := r.Run(context.Background(), "rust", src, nil); err == nil {
		t.Error("unknown language accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New(1).Run(ctx, taskset.Python, src, nil); err == nil {
		t.Error("cancelled context not reported")
	}
}

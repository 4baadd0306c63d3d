package artifact

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMetadataMigratesPolicyDirs: a run an older svbench wrote with E2's
// Rego directories as a launch setting resumes with them as the
// policy_dirs parameter, where today's runs keep them; a run that already
// has the parameter keeps its own.
func TestMetadataMigratesPolicyDirs(t *testing.T) {
	sep := string(os.PathListSeparator)
	for _, c := range []struct {
		name, json, want string
	}{
		{"old launch setting", `{"environment":"config-verification","launch":{"policy_dirs":["/a","/b"]}}`, "/a" + sep + "/b"},
		{"parameter wins", `{"params":{"policy_dirs":"/p"},"launch":{"policy_dirs":["/a"]}}`, "/p"},
		{"neither", `{"params":{"tool_budget":"3"}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, MetadataFile), []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			m, err := ReadMetadata(dir)
			if err != nil {
				t.Fatal(err)
			}
			if m.Params["policy_dirs"] != c.want || len(m.Launch.PolicyDirs) != 0 {
				t.Errorf("params %v, launch dirs %v; want policy_dirs=%q and no launch dirs", m.Params, m.Launch.PolicyDirs, c.want)
			}
		})
	}
}

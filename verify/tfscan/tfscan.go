// Package tfscan scans Terraform configuration held in memory with trivy's
// IaC scanner (github.com/aquasecurity/trivy v0.70.0, pkg/iac) and its
// embedded checks. It never touches the network or the real filesystem:
// files are served from an in-memory fs.FS, module downloads are disabled and
// the cached-module directory is ignored.
//
// A Scanner loads and compiles trivy's embedded Rego checks once in New and
// evaluates them through queries prepared once (checks.go), where trivy's own
// scanner builds and compiles a fresh query for every check on every scan.
// HCL parsing, evaluation and adaptation to trivy's cloud state are trivy's
// own; the check semantics (applicability, result parsing, inline ignores) are
// reproduced and held to trivy's scanner, kept as Options.TrivyScanner, by
// TestPreparedMatchesTrivy.
package tfscan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"

	"github.com/aquasecurity/trivy/pkg/iac/rego"
	"github.com/aquasecurity/trivy/pkg/iac/scan"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/options"
	"github.com/aquasecurity/trivy/pkg/iac/scanners/terraform"
	trivylog "github.com/aquasecurity/trivy/pkg/log"

	"github.com/svbench/svbench/verify"
)

// ToolName is the Finding.Tool of every finding this package reports.
const ToolName = "trivy"

// version is the trivy release whose embedded checks this package runs.
const version = "trivy v0.70.0"

// Default limits: model output is hostile, and trivy evaluates HCL
// expressions (count, for_each, functions), so both the bytes and the number
// of files are bounded before anything is parsed.
const (
	DefaultMaxFileBytes  = 1 << 20 // 1 MiB per .tf file
	DefaultMaxTotalBytes = 4 << 20
	DefaultMaxFiles      = 64
)

func init() {
	// trivy's log package installs, from its own init, a slog default handler
	// that buffers every record forever (until trivy's CLI "initialises"
	// logging) and is not goroutine-safe. A library caller never initialises
	// it, so leaving it in place leaks memory and races under concurrent
	// scans. Only that handler is replaced; a logger configured by the
	// program is left alone.
	if _, ok := slog.Default().Handler().(*trivylog.DeferredHandler); ok {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	}
}

// Options configure a Scanner. The zero value uses the defaults above.
type Options struct {
	MaxFileBytes  int
	MaxTotalBytes int
	MaxFiles      int
	// StrictHCL makes a file that does not parse an error naming it, where
	// trivy logs the error and scans the other files (a broken file then
	// reads as a clean one).
	StrictHCL bool
	// TrivyScanner runs trivy's own Terraform scanner (rego.Scanner and
	// executor) instead of svbench's prepared evaluation of the same
	// checks. Parity tests and benchmarks set it, to hold the two to the
	// same findings and to measure the difference in the same run.
	TrivyScanner bool
}

// Scanner runs trivy's Terraform checks. It is safe for concurrent use.
type Scanner struct {
	rs     *rego.Scanner // TrivyScanner only
	checks *checkSet
	opts   Options
	// scans numbers the in-memory filesystems (see keyedFS).
	scans atomic.Uint64
}

// keyedFS is the in-memory module with a name of its own. trivy keys
// every source range by types.CreateFSKey, which formats the filesystem
// value with %s and %#v: for a bare fstest.MapFS that prints every file's
// bytes, for every block, attribute and metadata value of the scan, and
// was most of a scan's CPU time. A Stringer/GoStringer makes the key a
// short constant, unique per scan as trivy needs it to be.
type keyedFS struct {
	fstest.MapFS
	key string
}

func (k keyedFS) String() string   { return k.key }
func (k keyedFS) GoString() string { return k.key }

var _ verify.Verifier = (*Scanner)(nil)

// New loads and compiles trivy's embedded checks once.
func New(opts Options) (*Scanner, error) {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxTotalBytes <= 0 {
		opts.MaxTotalBytes = DefaultMaxTotalBytes
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	if opts.TrivyScanner {
		rs := rego.NewScanner(
			rego.WithEmbeddedPolicies(true),
			rego.WithEmbeddedLibraries(true),
		)
		// The policy filesystem is only consulted for user check
		// directories, of which there are none: an empty in-memory FS keeps
		// it off the disk.
		if err := rs.LoadPolicies(fstest.MapFS{}); err != nil {
			return nil, fmt.Errorf("tfscan: loading trivy's embedded checks: %w", err)
		}
		return &Scanner{rs: rs, opts: opts}, nil
	}
	checks, err := newCheckSet(context.Background())
	if err != nil {
		return nil, fmt.Errorf("tfscan: %w", err)
	}
	return &Scanner{checks: checks, opts: opts}, nil
}

// Name implements verify.Verifier.
func (s *Scanner) Name() string { return ToolName }

// Version implements verify.Verifier.
func (s *Scanner) Version() string { return version }

// Verify scans the .tf files as one Terraform module (files in the same
// directory form a module, as for terraform itself). Files that are not
// Terraform are ignored. Findings are sorted by file, line and rule.
func (s *Scanner) Verify(ctx context.Context, files []verify.File) (out []verify.Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("tfscan: trivy panicked on this input: %v", r)
		}
	}()
	fsys, names, err := s.memFS(files)
	if err != nil {
		return nil, err
	}
	if len(fsys) == 0 {
		return nil, nil
	}
	scanFS := keyedFS{MapFS: fsys, key: fmt.Sprintf("svbench-tfscan-%d", s.scans.Add(1))}
	var results scan.Results
	if s.opts.TrivyScanner {
		results, err = terraform.New(
			rego.WithRegoScanner(s.rs),
			options.WithScanRawConfig(false),
			terraform.ScannerWithDownloadsAllowed(false),
			terraform.ScannerWithSkipCachedModules(true),
			terraform.ScannerWithAllDirectories(true),
			terraform.ScannerWithStopOnHCLError(s.opts.StrictHCL),
		).ScanFS(ctx, scanFS, ".")
	} else {
		results, err = s.scanModule(ctx, scanFS)
	}
	var diags hcl.Diagnostics
	if errors.As(err, &diags) {
		return nil, fmt.Errorf("tfscan: invalid HCL: %w", err)
	}
	if err != nil {
		return nil, fmt.Errorf("tfscan: %w", err)
	}
	for _, r := range results.GetFailed() {
		out = append(out, toFinding(r, names))
	}
	verify.SortFindings(out)
	return out, nil
}

// memFS lays the files out under sanitised relative paths. names maps the
// in-memory path back to the caller's path for reporting.
func (s *Scanner) memFS(files []verify.File) (fstest.MapFS, map[string]string, error) {
	fsys := fstest.MapFS{}
	names := map[string]string{}
	total, n := 0, 0
	for i, f := range files {
		if !IsTerraform(f.Path) {
			continue
		}
		n++
		if n > s.opts.MaxFiles {
			return nil, nil, fmt.Errorf("tfscan: more than %d Terraform files in one context", s.opts.MaxFiles)
		}
		if err := verify.GuardHCL(f.Path, f.Content, s.opts.MaxFileBytes, 0); err != nil {
			return nil, nil, fmt.Errorf("tfscan: %w", err)
		}
		total += len(f.Content)
		if total > s.opts.MaxTotalBytes {
			return nil, nil, fmt.Errorf("tfscan: Terraform files exceed %d bytes in total", s.opts.MaxTotalBytes)
		}
		p := memPath(f.Path, i)
		if _, dup := fsys[p]; dup {
			p = fmt.Sprintf("f%d_%s", i, path.Base(p))
		}
		fsys[p] = &fstest.MapFile{Data: f.Content, Mode: 0o444}
		names[p] = f.Path
	}
	return fsys, names, nil
}

// memPath flattens every file into the module root: a lint context is one
// module, and callers' directory names (possibly hostile: "..", absolute)
// must not shape the in-memory tree.
func memPath(p string, i int) string {
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	if base == "." || base == "/" || base == ".." || base == "" {
		base = fmt.Sprintf("file%d.tf", i)
	}
	return base
}

// IsTerraform reports whether a path names a Terraform file this scanner reads.
func IsTerraform(p string) bool {
	p = strings.ToLower(p)
	return strings.HasSuffix(p, ".tf") || strings.HasSuffix(p, ".tf.json")
}

func toFinding(r scan.Result, names map[string]string) verify.Finding {
	rule := r.Rule()
	id := avdID(rule)
	rng := r.Range()
	file := rng.GetLocalFilename()
	if file == "" {
		file = rng.GetFilename()
	}
	file = strings.TrimPrefix(file, "/")
	if orig, ok := names[file]; ok {
		file = orig
	}
	msg := r.Description()
	if msg == "" {
		msg = rule.Summary
	}
	if rule.LongID != "" {
		msg = fmt.Sprintf("%s (%s)", msg, rule.LongID)
	}
	raw := string(rule.Severity)
	return verify.Finding{
		Tool:        ToolName,
		RuleID:      id,
		Severity:    verify.NormalizeSeverity(raw),
		RawSeverity: raw,
		Message:     msg,
		File:        file,
		Line:        rng.GetStartLine(),
		Resource:    resourceAddress(r),
	}
}

// avdID is the Aqua Vulnerability Database id ("AVD-AWS-0086"). The checks
// bundled with trivy v0.70.0 name themselves without the "AVD-" prefix
// ("AWS-0086"); the prefixed form is what trivy printed for years and what
// datasets and users quote, so it is restored here.
func avdID(rule scan.Rule) string {
	id := rule.AVDID
	if id == "" {
		id = rule.ID
	}
	if id == "" {
		return rule.LongID
	}
	if !strings.HasPrefix(id, "AVD-") {
		id = "AVD-" + id
	}
	return id
}

// resourceAddress is the Terraform address of the block the finding is
// about (e.g. aws_s3_bucket.logs), walking up from the attribute trivy
// pointed at.
func resourceAddress(r scan.Result) string {
	m := r.Metadata()
	root := m.Root()
	if ref := root.Reference(); ref != "" {
		return ref
	}
	return m.Reference()
}

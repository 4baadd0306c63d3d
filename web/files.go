package web

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/svbench/svbench/artifact"
)

// DefaultMaxRowBytes bounds one results row the dashboard reads. Real rows
// with long multi-turn transcripts are a few MiB; decoding a row costs
// several times its size, so a row of hundreds of MiB must not be read.
const DefaultMaxRowBytes = 16 << 20

// maxSmallFile bounds the JSON files read whole (metadata, summary,
// manifest): they are small when svbench writes them, and anything else
// under the root is as hostile as the model output it holds.
const maxSmallFile = 16 << 20

// openRegular opens a file under the root for reading. Only regular files
// are opened: a FIFO would block the handler, a device would never end.
func (s *Server) openRegular(name string) (*os.File, error) {
	st, err := s.files.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	return s.files.Open(name)
}

// readFile reads a small file under the root whole.
func (s *Server) readFile(name string) ([]byte, error) {
	f, err := s.openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSmallFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSmallFile {
		return nil, fmt.Errorf("%s: larger than %d MiB", name, maxSmallFile>>20)
	}
	return b, nil
}

// readMetadata loads a run's metadata.json through the root.
func (s *Server) readMetadata(r runRef) (*artifact.Metadata, error) {
	b, err := s.readFile(r.file(artifact.MetadataFile))
	if err != nil {
		return nil, fmt.Errorf("read metadata: %w", err)
	}
	return artifact.DecodeMetadata(b, r.file(artifact.MetadataFile))
}

// index returns the offset index of a run's results.
func (s *Server) index(r runRef) *fileIndex {
	name := r.file(artifact.ResultsFile)
	return s.idx.get(name, func() (*os.File, error) { return s.openRegular(name) }, s.opts.MaxRowBytes)
}

// filesInRoot checks that the files a run directory holds and that code
// outside this package reads by path (compare, the leaderboard) are
// regular files under the root, or absent. Those packages open paths
// themselves, so a symlink leaving the root is refused here first.
func (s *Server) filesInRoot(r runRef) error {
	for _, name := range []string{artifact.MetadataFile, artifact.ResultsFile, artifact.SummaryFile, artifact.ManifestFile} {
		st, err := s.files.Stat(r.file(name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", r.file(name))
		}
	}
	return nil
}

// tooLargeRow is a row the dashboard does not read.
type tooLargeRow struct {
	size int64
}

func (e *tooLargeRow) Error() string { return fmt.Sprintf("row too large (%d bytes)", e.size) }

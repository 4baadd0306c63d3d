package ingest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"github.com/pierrec/lz4/v4"
)

// MaxParquetBytes bounds one completions table's file: it is input svbench
// does not control.
const MaxParquetBytes = 1 << 30

// DefaultMaxTableBytes bounds what one table may decode to. A file's size
// says little about that: a dictionary-encoded column stores a value once
// and every row that repeats it decodes it again (4,000 rows sharing one
// 1 MiB completion are 6 MB on disk and 4 GB decoded). One TRL logging
// step's completions are a few MiB; 256 MiB leaves room for long
// transcripts without letting one table take the machine.
const DefaultMaxTableBytes int64 = 256 << 20

// valueOverhead is what holding one decoded value costs beyond its bytes
// (the row's map entry, the JSON it becomes): it keeps a table of millions
// of tiny or null values, which run-length encoding stores in a few bytes,
// inside the budget too.
const valueOverhead = 64

// TableTooLargeError says a parquet table would decode to more than the
// limit; Options.MaxTableBytes (--max-table-mib) raises it.
type TableTooLargeError struct {
	Path  string
	Limit int64
	// What says what went over, in the table's own terms.
	What string
}

func (e *TableTooLargeError) Error() string {
	return fmt.Sprintf("%s: %s: more than the %s of decoded values svbench reads from one parquet table; raise the limit with --max-table-mib if the table is genuine",
		e.Path, e.What, sizeText(e.Limit))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadParquet reads every row of a parquet file as a JSON object keyed by
// top-level column: numbers, booleans and strings as themselves, byte
// arrays that are not UTF-8 as null, NaN and infinities as null (TRL
// writes NaN for a reward function that returned None), and a nested
// column (a list a reward function logged) as the list of its leaf values.
//
// limit bounds the decoded values (DefaultMaxTableBytes when 0 or less):
// every value counts its bytes each time a row holds it, so a value a
// dictionary stores once and 4,000 rows repeat counts 4,000 times. A table
// over it is a *TableTooLargeError, refused before its rows are kept. The
// parquet reader trusts the sizes a file declares and panics on some
// malformed files; the sizes are checked against the file and the limit
// before it reads (checkParquet), and a panic becomes this file's error, so
// one bad table never ends a report over a directory of them.
func ReadParquet(path string, limit int64) ([]map[string]json.RawMessage, error) {
	if limit <= 0 {
		limit = DefaultMaxTableBytes
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxParquetBytes {
		return nil, fmt.Errorf("%s: %d MiB; the limit is %d MiB", path, st.Size()>>20, MaxParquetBytes>>20)
	}
	return readParquet(f, st.Size(), path, limit)
}

// readParquet is ReadParquet of what f holds; path names it in errors.
func readParquet(f io.ReaderAt, size int64, path string, limit int64) (rows []map[string]json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			rows, err = nil, fmt.Errorf("%s: the parquet reader failed on this table (%v): the file is corrupt or not a parquet table; re-export it", path, p)
		}
	}()
	return decodeParquet(f, size, path, limit)
}

func decodeParquet(f io.ReaderAt, size int64, path string, limit int64) ([]map[string]json.RawMessage, error) {
	footer, err := checkFooter(f, size, limit)
	if err != nil {
		return nil, annotate(path, limit, err)
	}
	// The page index and bloom filters are read at offsets the footer
	// names and sized by what they hold; svbench uses neither.
	pf, err := parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: not a parquet file: %w", path, err)
	}
	if err := checkPages(f, size-footer, pf.Metadata(), limit); err != nil {
		return nil, annotate(path, limit, err)
	}
	cols := pf.Schema().Columns()
	names := make([]string, len(cols))
	nested := make([]bool, len(cols))
	for i, p := range cols {
		names[i], nested[i] = p[0], len(p) > 1
	}
	var out []map[string]json.RawMessage
	var decoded int64
	buf := make([]parquet.Row, 64)
	for _, rg := range pf.RowGroups() {
		rows := rg.Rows()
		for {
			n, rerr := rows.ReadRows(buf)
			for _, r := range buf[:n] {
				decoded += rowCost(r)
				if decoded > limit {
					_ = rows.Close()
					return nil, &TableTooLargeError{Path: path, Limit: limit, What: fmt.Sprintf("its first %d rows decode to %s", len(out)+1, sizeText(decoded))}
				}
				out = append(out, parquetRow(r, names, nested))
			}
			if rerr != nil {
				_ = rows.Close()
				if errors.Is(rerr, io.EOF) {
					break
				}
				return nil, fmt.Errorf("%s: %w", path, rerr)
			}
		}
	}
	return out, nil
}

// rowCost is what keeping a row's values costs: each value's bytes, every
// time it occurs, and its overhead.
func rowCost(r parquet.Row) int64 {
	var n int64
	for _, v := range r {
		n += valueOverhead
		if k := v.Kind(); !v.IsNull() && (k == parquet.ByteArray || k == parquet.FixedLenByteArray) {
			n += int64(len(v.ByteArray()))
		}
	}
	return n
}

// tooLarge is a budget check's finding before the path is known.
type tooLarge struct{ what string }

func (e *tooLarge) Error() string { return e.what }

func annotate(path string, limit int64, err error) error {
	var tl *tooLarge
	if errors.As(err, &tl) {
		return &TableTooLargeError{Path: path, Limit: limit, What: tl.what}
	}
	return fmt.Errorf("%s: not a readable parquet table: %w", path, err)
}

// footerElemCost is what one element of a list in the footer may cost
// once decoded (format.ColumnChunk, the largest, is about 1 KiB): the
// footer's lists are allocated at the length they declare.
const footerElemCost = 1 << 10

// checkFooter checks the footer the parquet reader will decode: its
// length against the file (the reader allocates the length it reads
// before comparing it with anything) and its thrift structure, whose list
// lengths the reader also allocates as declared. It returns the bytes the
// footer and its trailer take at the end of the file.
func checkFooter(f io.ReaderAt, size, limit int64) (int64, error) {
	const magic = "PAR1"
	if size < 12 {
		return 0, fmt.Errorf("%d bytes is too short for a parquet file (at least 12)", size)
	}
	var head, tail [8]byte
	if _, err := f.ReadAt(head[:4], 0); err != nil {
		return 0, err
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0, err
	}
	switch {
	case string(tail[4:]) == "PARE":
		return 0, errors.New("its footer is encrypted; svbench reads unencrypted tables only")
	case string(head[:4]) != magic || string(tail[4:]) != magic:
		return 0, errors.New("no PAR1 magic at its start and end")
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return 0, fmt.Errorf("its footer claims %d bytes and the file holds %d", n, size)
	}
	if n > limit {
		return 0, &tooLarge{fmt.Sprintf("its footer is %s", sizeText(n))}
	}
	w := compactWalker{r: bufio.NewReader(io.NewSectionReader(f, size-8-n, n)), left: n, elems: limit / footerElemCost}
	if err := w.structure(0); err != nil {
		return 0, fmt.Errorf("footer: %w", err)
	}
	return n + 8, nil
}

// checkPages walks every page header of every column chunk, as the
// parquet reader will, and checks what it would allocate: the compressed
// page (its declared size, read whole) within its chunk and the chunk
// within the file's data, the decompressed page, and the values it holds,
// summed over the table, within limit. A compressed page is decompressed
// once, bounded, to check its declared size: the reader's decompressors
// otherwise size their output from the stream (a few bytes of zstd or
// snappy can declare gigabytes), and its LZ4 decoder doubles its buffer
// without end on a corrupt block.
func checkPages(f io.ReaderAt, dataEnd int64, md *format.FileMetaData, limit int64) error {
	var cost int64
	charge := func(n int64, what string) error {
		cost += n
		if cost > limit {
			return &tooLarge{fmt.Sprintf("its pages declare %s (%s)", sizeText(cost), what)}
		}
		return nil
	}
	var rows int64
	for _, rg := range md.RowGroups {
		rows += max(rg.NumRows, 0)
		if rows > limit/valueOverhead {
			return &tooLarge{fmt.Sprintf("it declares %d rows", rows)}
		}
	}
	for i, rg := range md.RowGroups {
		for j, cc := range rg.Columns {
			if cc.CryptoMetadata.Value != nil || len(cc.EncryptedColumnMetadata) > 0 {
				return errors.New("a column is encrypted; svbench reads unencrypted tables only")
			}
			m := cc.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset != 0 {
				start = m.DictionaryPageOffset
			}
			if start < 4 || m.TotalCompressedSize < 0 || m.TotalCompressedSize > dataEnd-start {
				return fmt.Errorf("row group %d column %d: its pages (offset %d, %d bytes) lie outside the file's data (%d bytes)", i, j, start, m.TotalCompressedSize, dataEnd)
			}
			if err := checkChunk(f, start, start+m.TotalCompressedSize, m.Codec, charge); err != nil {
				return fmt.Errorf("row group %d column %d: %w", i, j, err)
			}
		}
	}
	return nil
}

func checkChunk(f io.ReaderAt, pos, end int64, codec format.CompressionCodec, charge func(int64, string) error) error {
	for page := 0; pos < end; page++ {
		w := compactWalker{r: bufio.NewReader(io.NewSectionReader(f, pos, end-pos)), left: end - pos, elems: 1 << 10}
		if err := w.structure(0); err != nil {
			return fmt.Errorf("page %d header: %w", page, err)
		}
		n := end - pos - w.left
		if err := charge(n, "a page header"); err != nil {
			return err
		}
		raw := make([]byte, n)
		if _, err := f.ReadAt(raw, pos); err != nil {
			return err
		}
		var h format.PageHeader
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), raw, &h); err != nil {
			return fmt.Errorf("page %d header: %w", page, err)
		}
		pos += n
		if h.CompressedPageSize < 0 || h.UncompressedPageSize < 0 || int64(h.CompressedPageSize) > end-pos {
			return fmt.Errorf("page %d declares %d bytes compressed, %d uncompressed, and its chunk has %d left", page, h.CompressedPageSize, h.UncompressedPageSize, end-pos)
		}
		values, skip, compressed := int64(0), int64(0), codec != format.Uncompressed
		switch {
		case h.DataPageHeader.Valid:
			values = int64(h.DataPageHeader.V.NumValues)
		case h.DictionaryPageHeader.Valid:
			values = int64(h.DictionaryPageHeader.V.NumValues)
		case h.DataPageHeaderV2.Valid:
			v := h.DataPageHeaderV2.V
			values = int64(v.NumValues)
			skip = int64(v.RepetitionLevelsByteLength) + int64(v.DefinitionLevelsByteLength)
			if v.RepetitionLevelsByteLength < 0 || v.DefinitionLevelsByteLength < 0 || skip > int64(h.CompressedPageSize) {
				return fmt.Errorf("page %d: its levels (%d and %d bytes) do not fit its %d bytes", page, v.RepetitionLevelsByteLength, v.DefinitionLevelsByteLength, h.CompressedPageSize)
			}
			compressed = compressed && (!v.IsCompressed.Valid || v.IsCompressed.V)
		}
		if values < 0 {
			return fmt.Errorf("page %d declares %d values", page, values)
		}
		if err := charge(int64(h.CompressedPageSize)+int64(h.UncompressedPageSize)+values*valueOverhead, fmt.Sprintf("page %d holds %d values", page, values)); err != nil {
			return err
		}
		if compressed && (h.Type == format.DataPage || h.Type == format.DataPageV2 || h.Type == format.DictionaryPage) {
			src := make([]byte, int64(h.CompressedPageSize)-skip)
			if _, err := f.ReadAt(src, pos+skip); err != nil {
				return err
			}
			if err := checkDecompressed(codec, src, int64(h.UncompressedPageSize)); err != nil {
				return fmt.Errorf("page %d: %w", page, err)
			}
		}
		pos += int64(h.CompressedPageSize)
	}
	return nil
}

// checkDecompressed decompresses src, stopping past want bytes, and fails
// when it holds more than the page declared.
func checkDecompressed(codec format.CompressionCodec, src []byte, want int64) error {
	over := func(n int64) error {
		if n > want {
			return fmt.Errorf("%s data decompresses to more than the %d bytes its header declares", codec, want)
		}
		return nil
	}
	stream := func(r io.Reader, err error) error {
		if err != nil {
			return fmt.Errorf("%s data: %w", codec, err)
		}
		n, err := io.Copy(io.Discard, io.LimitReader(r, want+1))
		if err != nil {
			return fmt.Errorf("%s data: %w", codec, err)
		}
		return over(n)
	}
	switch codec {
	case format.Snappy:
		n, err := s2.DecodedLen(src)
		if err != nil {
			return fmt.Errorf("%s data: %w", codec, err)
		}
		return over(int64(n))
	case format.Gzip:
		r, err := gzip.NewReader(bytes.NewReader(src))
		return stream(r, err)
	case format.Brotli:
		return stream(brotli.NewReader(bytes.NewReader(src)), nil)
	case format.Zstd:
		var h zstd.Header
		if err := h.Decode(src); err != nil {
			return fmt.Errorf("%s data: %w", codec, err)
		}
		if err := over(int64(min(h.FrameContentSize, 1<<62))); h.HasFCS && err != nil {
			return err
		}
		d, err := zstd.NewReader(bytes.NewReader(src), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(min(max(want, 8<<20), zstd.MaxWindowSize))))
		if err != nil {
			return fmt.Errorf("%s data: %w", codec, err)
		}
		defer d.Close()
		return stream(d, nil)
	case format.Lz4Raw:
		if _, err := lz4.UncompressBlock(src, make([]byte, want)); err != nil {
			return fmt.Errorf("%s data does not decompress into the %d bytes its header declares: %w", codec, want, err)
		}
		return nil
	default:
		return fmt.Errorf("compression %s is not one svbench reads (uncompressed, snappy, gzip, brotli, zstd, lz4_raw)", codec)
	}
}

// maxThriftDepth bounds nesting: parquet's metadata nests a few levels,
// and the reader skips an unknown field by recursing into it.
const maxThriftDepth = 32

// compactWalker reads one thrift compact-protocol struct without keeping
// it, checking that every length and count it declares fits in what is
// left of its section (each element takes at least a byte) and that the
// elements together stay under elems.
type compactWalker struct {
	r     *bufio.Reader
	left  int64 // bytes left in the section
	elems int64 // list, set and map elements still allowed
}

var errTruncated = errors.New("truncated or corrupt thrift")

func (w *compactWalker) byte() (byte, error) {
	if w.left <= 0 {
		return 0, errTruncated
	}
	b, err := w.r.ReadByte()
	if err != nil {
		return 0, errTruncated
	}
	w.left--
	return b, nil
}

func (w *compactWalker) uvarint() (uint64, error) {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := w.byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, nil
		}
	}
	return 0, errors.New("thrift varint longer than 10 bytes")
}

func (w *compactWalker) skip(n uint64) error {
	if n > uint64(w.left) {
		return fmt.Errorf("thrift value of %d bytes with %d left", n, w.left)
	}
	if _, err := w.r.Discard(int(n)); err != nil {
		return errTruncated
	}
	w.left -= int64(n)
	return nil
}

func (w *compactWalker) count(n uint64) error {
	if n > uint64(w.left) {
		return fmt.Errorf("thrift list of %d elements with %d bytes left", n, w.left)
	}
	w.elems -= int64(n)
	if w.elems < 0 {
		return &tooLarge{"its metadata lists more elements than the limit allows"}
	}
	return nil
}

func (w *compactWalker) structure(depth int) error {
	if depth > maxThriftDepth {
		return fmt.Errorf("thrift nested deeper than %d", maxThriftDepth)
	}
	for {
		b, err := w.byte()
		if err != nil {
			return err
		}
		if b == 0 {
			return nil
		}
		if b>>4 == 0 { // no delta: the field id follows
			if _, err := w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.value(b&0x0f, depth, false); err != nil {
			return err
		}
	}
}

// value skips one value of compact type t; a boolean is its field header
// in a struct and a byte in a list.
func (w *compactWalker) value(t byte, depth int, inList bool) error {
	switch t {
	case 1, 2: // true, false
		if inList {
			return w.skip(1)
		}
		return nil
	case 3: // byte
		return w.skip(1)
	case 4, 5, 6: // i16, i32, i64
		_, err := w.uvarint()
		return err
	case 7: // double
		return w.skip(8)
	case 8: // binary
		n, err := w.uvarint()
		if err != nil {
			return err
		}
		return w.skip(n)
	case 9, 10: // list, set
		h, err := w.byte()
		if err != nil {
			return err
		}
		n := uint64(h >> 4)
		if n == 15 {
			if n, err = w.uvarint(); err != nil {
				return err
			}
		}
		if err := w.count(n); err != nil {
			return err
		}
		for range n {
			if err := w.value(h&0x0f, depth+1, true); err != nil {
				return err
			}
		}
		return nil
	case 11: // map
		n, err := w.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := w.byte()
		if err != nil {
			return err
		}
		if err := w.count(n); err != nil {
			return err
		}
		for range n {
			if err := w.value(kv>>4, depth+1, true); err != nil {
				return err
			}
			if err := w.value(kv&0x0f, depth+1, true); err != nil {
				return err
			}
		}
		return nil
	case 12: // struct
		return w.structure(depth + 1)
	default:
		return fmt.Errorf("thrift type %d is not one the compact protocol has", t)
	}
}

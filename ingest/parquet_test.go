package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// trlRec is a completions table's row as TRL writes it, with a list
// column (what a reward function logging a list adds) to cover nesting.
type trlRec struct {
	Step       int64    `parquet:"step"`
	Prompt     string   `parquet:"prompt"`
	Completion string   `parquet:"completion,dict"`
	ExampleID  string   `parquet:"example_id"`
	Reward     float64  `parquet:"reward"`
	Tags       []string `parquet:"tags,list"`
}

// tableBytes writes rows with the library svbench reads tables with.
func tableBytes(tb testing.TB, rows []trlRec, opts ...parquet.WriterOption) []byte {
	tb.Helper()
	var b bytes.Buffer
	w := parquet.NewGenericWriter[trlRec](&b, opts...)
	if _, err := w.Write(rows); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// sharedRows are n rows whose completion is one value of size bytes: the
// dictionary stores it once, every row decodes it.
func sharedRows(n, size int) []trlRec {
	c := strings.Repeat("x", size)
	rows := make([]trlRec, n)
	for i := range rows {
		rows[i] = trlRec{Step: 1, Prompt: "p", Completion: c, ExampleID: "e", Reward: 1, Tags: []string{"a"}}
	}
	return rows
}

// rawTable assembles a table of one required byte-array column,
// "completion", holding one page: its header h (sizes free to lie) and
// data, compressed with codec as the column chunk says.
func rawTable(tb testing.TB, codec format.CompressionCodec, h format.PageHeader, data []byte, rows int64) []byte {
	tb.Helper()
	proto := new(thrift.CompactProtocol)
	hdr, err := thrift.Marshal(proto, &h)
	if err != nil {
		tb.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteString("PAR1")
	off := int64(b.Len())
	b.Write(hdr)
	b.Write(data)
	chunk := int64(len(hdr) + len(data))
	md := format.FileMetaData{
		Version: 1,
		Schema: []format.SchemaElement{
			{Name: "schema", NumChildren: thrift.New[int32](1)},
			{Name: "completion", Type: thrift.New(format.ByteArray), RepetitionType: thrift.New(format.Required)},
		},
		NumRows: rows,
		RowGroups: []format.RowGroup{{
			Columns: []format.ColumnChunk{{FileOffset: off, MetaData: format.ColumnMetaData{
				Type: format.ByteArray, Encoding: []format.Encoding{format.Plain}, PathInSchema: []string{"completion"},
				Codec: codec, NumValues: rows, TotalUncompressedSize: chunk, TotalCompressedSize: chunk, DataPageOffset: off,
			}}},
			TotalByteSize: chunk, NumRows: rows,
		}},
	}
	footer, err := thrift.Marshal(proto, &md)
	if err != nil {
		tb.Fatal(err)
	}
	b.Write(footer)
	b.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(footer))))
	b.WriteString("PAR1")
	return b.Bytes()
}

// dataPage is the header of a plain data page of n values.
func dataPage(n, compressed, uncompressed int32) format.PageHeader {
	return format.PageHeader{
		Type: format.DataPage, CompressedPageSize: compressed, UncompressedPageSize: uncompressed,
		DataPageHeader: thrift.New(format.DataPageHeader{NumValues: n, Encoding: format.Plain, DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE}),
	}
}

// plainValues is n byte-array values, PLAIN-encoded (a length, the bytes).
func plainValues(vals ...string) []byte {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
		b = append(b, v...)
	}
	return b
}

// withFooter replaces a table's footer with raw thrift bytes.
func withFooter(table, footer []byte) []byte {
	n := int(binary.LittleEndian.Uint32(table[len(table)-8:]))
	out := append([]byte(nil), table[:len(table)-8-n]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...)
}

func writeFile(tb testing.TB, data []byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "completions_00001.parquet")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestReadParquetBoundsDecodedBytes: what a table decodes to is bounded,
// counting a value each time a row holds it, whatever the file's size.
func TestReadParquetBoundsDecodedBytes(t *testing.T) {
	small := []trlRec{{Step: 1, Prompt: "p", Completion: "c1", ExampleID: "e1", Reward: 0.5, Tags: []string{"a", "b"}}, {Step: 1, Prompt: "p", Completion: "c2", ExampleID: "e2"}}
	for _, tc := range []struct {
		name     string
		data     []byte
		limit    int64
		wantRows int
		wantErr  string // "" = read
	}{
		{name: "a small table, the default limit", data: tableBytes(t, small), wantRows: 2},
		// 400 rows sharing one 64 KiB completion: about 64 KiB on disk,
		// 25 MiB decoded; the 4,000 × 1 MiB scaled down.
		{name: "rows sharing one value, over the limit", data: tableBytes(t, sharedRows(400, 64<<10)), limit: 4 << 20, wantErr: "4 MiB"},
		{name: "the same rows, the limit raised", data: tableBytes(t, sharedRows(400, 64<<10)), limit: 64 << 20, wantRows: 400},
		// Empty values cost nothing on disk; a row still costs memory.
		{name: "many empty rows", data: tableBytes(t, make([]trlRec, 100_000)), limit: 1 << 20, wantErr: "100000 rows"},
		{name: "a page declaring more than the limit", data: rawTable(t, format.Uncompressed, dataPage(1, 5, 1<<30), plainValues("x"), 1), limit: 1 << 20, wantErr: "its pages declare"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.data)
			rows, err := ReadParquet(path, tc.limit)
			if tc.wantErr == "" {
				if err != nil || len(rows) != tc.wantRows {
					t.Fatalf("%d rows, err %v; want %d rows", len(rows), err, tc.wantRows)
				}
				return
			}
			var tl *TableTooLargeError
			if !errors.As(err, &tl) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "--max-table-mib") || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v; want a TableTooLargeError naming %s, %q and --max-table-mib", err, path, tc.wantErr)
			}
		})
	}
	t.Run("values", func(t *testing.T) {
		rows, err := ReadParquet(writeFile(t, tableBytes(t, small)), 0)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(rows[0])
		if want := `{"completion":"c1","example_id":"e1","prompt":"p","reward":0.5,"step":1,"tags":["a","b"]}`; string(got) != want {
			t.Fatalf("row 0 = %s, want %s", got, want)
		}
	})
}

// TestReadParquetRefusesWhatItCannotAfford: a table whose declared sizes
// lie is an error naming the file, found before the reader allocates what
// the lie asks for (each case would allocate gigabytes, or loop, unchecked).
func TestReadParquetRefusesWhatItCannotAfford(t *testing.T) {
	valid := tableBytes(t, sharedRows(3, 10))
	huge := func(b []byte) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(b[len(b)-8:], 0xfffffff0)
		return b
	}
	vals := plainValues("hello")
	// A snappy block starts with its decoded length: 4 GiB here.
	snappyLie := append(binary.AppendUvarint(nil, 1<<32-1), 0, 0, 0, 0)
	// A zstd frame header declaring 1 GiB of content, and no blocks.
	zstdLie := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xa0, 0, 0, 0, 0x40}
	// A footer whose schema list declares 2^31-1 elements.
	listLie := []byte{0x15, 0x02, 0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x07, 0x00}
	deep := append(bytes.Repeat([]byte{0x1c}, 100_000), bytes.Repeat([]byte{0}, 100_001)...)
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"not parquet", "too short", []byte("hello")},
		{"no magic", "no PAR1 magic", append([]byte("PAR1"), bytes.Repeat([]byte{1}, 20)...)},
		{"a footer longer than the file", "footer claims 4294967280 bytes", huge(valid)},
		{"cut short", "not a", valid[:len(valid)/2]},
		{"a footer list longer than the footer", "thrift list of 2147483647 elements", withFooter(valid, listLie)},
		{"a footer nested 100,000 deep", "nested deeper than", withFooter(valid, deep)},
		{"a page longer than its chunk", "declares 2147483647 bytes compressed", rawTable(t, format.Uncompressed, dataPage(1, 1<<31-1, 9), vals, 1)},
		{"a snappy page declaring 4 GiB", "decompresses to more than the 9 bytes", rawTable(t, format.Snappy, dataPage(1, int32(len(snappyLie)), 9), snappyLie, 1)},
		{"a zstd page declaring 1 GiB", "decompresses to more than the 9 bytes", rawTable(t, format.Zstd, dataPage(1, int32(len(zstdLie)), 9), zstdLie, 1)},
		{"a corrupt lz4 page", "does not decompress into the 9 bytes", rawTable(t, format.Lz4Raw, dataPage(1, 4, 9), []byte{0xff, 0xff, 0xff, 0xff}, 1)},
		{"a page declaring 2^31-1 values", "holds 2147483647 values", rawTable(t, format.Uncompressed, dataPage(1<<31-1, int32(len(vals)), int32(len(vals))), vals, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.data)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := ReadParquet(path, 0)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want one naming %s and saying %q", err, path, tc.want)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
				t.Fatalf("allocated %d MiB refusing it", got>>20)
			}
		})
	}
}

// corpusBytes is an input of FuzzReadParquet's committed corpus.
func corpusBytes(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzReadParquet", name))
	if err != nil {
		tb.Fatal(err)
	}
	_, lit, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lit, "[]byte("), ")"))
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return []byte(s)
}

// CorpusBytes lets the external tests build directories of tables from
// the corpus.
var CorpusBytes = corpusBytes

// TestReadParquetRecoversReaderPanics: tables (1.5 KB, mutated from ones
// the library wrote) on which the parquet reader panics are each an error
// naming the file, not the end of the process.
func TestReadParquetRecoversReaderPanics(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzReadParquet"))
	if err != nil {
		t.Fatal(err)
	}
	panicked := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "reader-") {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			data := corpusBytes(t, e.Name())
			path := writeFile(t, data)
			bare := func() (p any) {
				defer func() { p = recover() }()
				_, _ = decodeParquet(bytes.NewReader(data), int64(len(data)), path, DefaultMaxTableBytes)
				return nil
			}()
			_, err := ReadParquet(path, 0)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want one naming %s", err, path)
			}
			if bare != nil {
				panicked++
				if !strings.Contains(err.Error(), "the parquet reader failed") || !strings.Contains(err.Error(), fmt.Sprint(bare)) {
					t.Fatalf("err = %v, want the reader's panic (%v) named", err, bare)
				}
			}
		})
	}
	t.Logf("%d of the corpus's tables panic the bare reader", panicked)
}

// TestReadParquetValidTables: what the checks walk (page headers,
// dictionaries, every codec, both data page versions) does not refuse a
// table the library wrote.
func TestReadParquetValidTables(t *testing.T) {
	rows := sharedRows(50, 300)
	rows[7].Completion = "another"
	rows[9].Tags = nil
	for _, tc := range []struct {
		name string
		opts []parquet.WriterOption
	}{
		{"uncompressed", []parquet.WriterOption{parquet.Compression(&parquet.Uncompressed)}},
		{"snappy", []parquet.WriterOption{parquet.Compression(&parquet.Snappy)}},
		{"gzip", []parquet.WriterOption{parquet.Compression(&parquet.Gzip)}},
		{"brotli", []parquet.WriterOption{parquet.Compression(&parquet.Brotli)}},
		{"zstd", []parquet.WriterOption{parquet.Compression(&parquet.Zstd)}},
		{"lz4", []parquet.WriterOption{parquet.Compression(&parquet.Lz4Raw)}},
		{"data page v2, zstd", []parquet.WriterOption{parquet.DataPageVersion(2), parquet.Compression(&parquet.Zstd)}},
		{"small pages and row groups", []parquet.WriterOption{parquet.PageBufferSize(512), parquet.MaxRowsPerRowGroup(7), parquet.Compression(&parquet.Snappy)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadParquet(writeFile(t, tableBytes(t, rows, tc.opts...)), 1<<20)
			if err != nil || len(got) != len(rows) {
				t.Fatalf("%d rows, err %v; want %d", len(got), err, len(rows))
			}
			if s, _ := stringValue(got[7]["completion"]); s != "another" {
				t.Fatalf("row 7 completion %s", got[7]["completion"])
			}
		})
	}
}

// FuzzReadParquet: no table, however mangled, panics out of ReadParquet,
// allocates what it declares unchecked or loops (the fuzzer's memory and
// time limits catch those), and a table read is within its limit.
func FuzzReadParquet(f *testing.F) {
	rows := sharedRows(20, 100)
	rows[3].Completion, rows[4].Tags = "other", nil
	for _, opts := range [][]parquet.WriterOption{
		nil,
		{parquet.Compression(&parquet.Snappy)},
		{parquet.Compression(&parquet.Gzip)},
		{parquet.Compression(&parquet.Zstd)},
		{parquet.Compression(&parquet.Lz4Raw)},
		{parquet.Compression(&parquet.Brotli)},
		{parquet.DataPageVersion(2), parquet.Compression(&parquet.Snappy)},
		{parquet.PageBufferSize(256), parquet.MaxRowsPerRowGroup(5)},
	} {
		f.Add(tableBytes(f, rows, opts...))
	}
	vals := plainValues("a", "bc")
	f.Add(rawTable(f, format.Uncompressed, dataPage(2, int32(len(vals)), int32(len(vals))), vals, 2))
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := readParquet(bytes.NewReader(data), int64(len(data)), "fuzz.parquet", limit)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.parquet") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		// JSON escaping makes a control byte six ("\u0001"); the limit
		// counts the bytes the table holds.
		var n int64
		for _, r := range got {
			for _, v := range r {
				n += int64(len(v))
			}
		}
		if n > 6*limit {
			t.Fatalf("read %d bytes of JSON values, over six times the %d limit", n, limit)
		}
	})
}

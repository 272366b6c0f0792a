package kv_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/ordoplane/ordo/storage/kv"
)

// contents returns every key and value of r.
func contents(t testing.TB, r kv.Reader) [][2]string {
	t.Helper()
	var out [][2]string
	if err := r.Scan(nil, nil, false, func(k, v []byte) error {
		out = append(out, [2]string{string(k), string(v)})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameContents(t testing.TB, got, want [][2]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("key %d: %q=%.20q, want %q=%.20q", i, got[i][0], got[i][1], want[i][0], want[i][1])
		}
	}
}

func TestExportImport(t *testing.T) {
	src := open(t)
	// Binary keys and values, an empty value, and a key of 0xff bytes that
	// sorts after any key ordo writes.
	set(t, src, "a", "1", "", "empty key", "bin\x00\x01", "\x00\xff", "empty", "",
		"\xff\xff\xff\xff\xff\xff\xff\xff\xff", "top", "z", strings.Repeat("v", 70000))

	dst := open(t)
	// Keys only dst has must be gone after Import, including ones past
	// every key of src; keys both have take src's value.
	set(t, dst, "a", "old", "only-dst", "x", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "x", "\x00", "x")

	var buf bytes.Buffer
	if err := kv.Export(src, &buf); err != nil {
		t.Fatal(err)
	}
	if err := dst.Import(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	sameContents(t, contents(t, dst), contents(t, src))

	// Exporting the imported store yields the same stream.
	var again bytes.Buffer
	if err := kv.Export(dst, &again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Error("export of the imported store differs from the original export")
	}
}

func TestExportFromSnapshot(t *testing.T) {
	src := open(t)
	set(t, src, "a", "1", "b", "1")
	snap := src.Snapshot()
	defer snap.Close()
	want := contents(t, snap)
	set(t, src, "a", "2", "c", "2")
	del(t, src, "b")

	var buf bytes.Buffer
	if err := kv.Export(snap, &buf); err != nil {
		t.Fatal(err)
	}
	dst := open(t)
	if err := dst.Import(&buf); err != nil {
		t.Fatal(err)
	}
	sameContents(t, contents(t, dst), want)
}

func TestImportEmptyExportClears(t *testing.T) {
	var buf bytes.Buffer
	if err := kv.Export(open(t), &buf); err != nil {
		t.Fatal(err)
	}
	dst := open(t)
	set(t, dst, "a", "1", "b", "2")
	if err := dst.Import(&buf); err != nil {
		t.Fatal(err)
	}
	if got := contents(t, dst); len(got) != 0 {
		t.Fatalf("after importing an empty export: %q", got)
	}
}

func TestImportLarge(t *testing.T) {
	// More than one internal import batch (4 MiB): 6 MB in 1,500 keys
	// (the cost under -race is per key).
	src := open(t)
	b := src.Batch()
	val := bytes.Repeat([]byte("x"), 4000)
	for i := range 1500 {
		b.Set(fmt.Appendf(nil, "k%06d", i), val)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := kv.Export(src, &buf); err != nil {
		t.Fatal(err)
	}
	dst := open(t)
	set(t, dst, "k000750", "old", "zzz", "old")
	if err := dst.Import(&buf); err != nil {
		t.Fatal(err)
	}
	sameContents(t, contents(t, dst), contents(t, src))
}

func TestImportRejectsBadStreams(t *testing.T) {
	src := open(t)
	set(t, src, "a", "1", "b", "2")
	var buf bytes.Buffer
	if err := kv.Export(src, &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()

	for name, data := range map[string][]byte{
		"empty":            nil,
		"wrong magic":      append([]byte("ordo-kv-0\n"), good[10:]...),
		"truncated record": good[:len(good)-1],
		"truncated header": append(bytes.Clone(good), 0x80),
		"oversized record": append(bytes.Clone(good), 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01),
		"record past end":  append(bytes.Clone(good), 0x05, 0x05, 'x'),
	} {
		t.Run(name, func(t *testing.T) {
			dst := open(t)
			set(t, dst, "keep", "1")
			if err := dst.Import(bytes.NewReader(data)); err == nil {
				t.Fatal("Import succeeded")
			}
		})
	}
	// A stream that is not an export at all leaves the store untouched.
	dst := open(t)
	set(t, dst, "keep", "1")
	if err := dst.Import(strings.NewReader("hello world, not an export")); err == nil {
		t.Fatal("Import of garbage succeeded")
	}
	wantGet(t, dst, "keep", "1")
}

// A truncated stream must not leave the held-back checkpoint key behind:
// callers rely on its absence to know the import did not finish.
func TestImportWritesHeldKeysLast(t *testing.T) {
	src := open(t)
	set(t, src, "a", "1", "meta/applied", "42", "z", "26")
	var buf bytes.Buffer
	if err := kv.Export(src, &buf); err != nil {
		t.Fatal(err)
	}
	full := buf.Bytes()

	dst := open(t)
	if err := dst.Import(bytes.NewReader(full), []byte("meta/applied")); err != nil {
		t.Fatal(err)
	}
	sameContents(t, contents(t, dst), contents(t, src))

	// Cut the stream inside the last record: "meta/applied" was read before
	// the cut but must not have been written.
	cut := open(t)
	err := cut.Import(bytes.NewReader(full[:len(full)-1]), []byte("meta/applied"))
	if err == nil {
		t.Fatal("truncated import succeeded")
	}
	if _, err := cut.Get([]byte("meta/applied")); err != kv.ErrNotFound {
		t.Fatalf("held key present after a failed import: %v", err)
	}
}

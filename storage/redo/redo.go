package redo

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// magic opens every segment file, followed by the length-prefixed tag.
const magic = "ordo-redo 1\n"

// suffix names segment files: <from, zero-padded>.redo.
const suffix = ".redo"

// recordHeader is a record's length and CRC-32C; its payload is from and
// to (big-endian) and the batch.
const recordHeader = 8

const spanBytes = 16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrClosed is returned by a Log used after Close.
var ErrClosed = errors.New("redo: log closed")

// Record is one committed batch: applied to a store at index From, Batch
// brings it to To.
type Record struct {
	From, To uint64
	Batch    []byte
}

// Log is a directory of segment files of records, appended in commit
// order, indexed in memory by the index each record starts from.
type Log struct {
	dir          string
	tag          string
	segmentBytes int64

	mu struct {
		sync.Mutex
		segs   []*segment // ascending by first record
		recs   []loc      // every record, in append order
		byFrom map[uint64]int
		cur    *os.File // the segment appended to; nil until the first Append
		w      *bufio.Writer
		closed bool
	}
}

// segment is one file of the log.
type segment struct {
	path  string
	first uint64 // From of its first record
	last  uint64 // the highest To of its records
	size  int64  // bytes appended, buffered ones included
	// flushed is how many of its bytes are in the file.
	flushed int64
}

// loc is where a record lies.
type loc struct {
	from, to uint64
	seg      *segment
	off      int64 // of the batch
	n        int   // the batch's length
}

// Open opens (creating) the log in dir. Segments written with another
// tag are removed, as is a torn record at a segment's end (the rest of
// that segment is kept). Appends go to new segments of about
// segmentBytes each.
func Open(dir, tag string, segmentBytes int64) (*Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("redo: %w", err)
	}
	l := &Log{dir: dir, tag: tag, segmentBytes: segmentBytes}
	l.mu.byFrom = map[uint64]int{}
	names, err := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if err != nil {
		return nil, fmt.Errorf("redo: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := l.load(name); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// load indexes the records of the segment at path, or removes it if it
// is of another tag or holds none.
func (l *Log) load(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("redo: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	off, ok := readHead(r, l.tag)
	seg := &segment{path: path}
	var recs []loc
	for ok {
		var h [recordHeader + spanBytes]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			break
		}
		n := int(binary.BigEndian.Uint32(h[0:4]))
		if n < spanBytes {
			break
		}
		body := make([]byte, n-spanBytes)
		if _, err := io.ReadFull(r, body); err != nil {
			break
		}
		crc := crc32.Update(crc32.Checksum(h[recordHeader:], castagnoli), castagnoli, body)
		if crc != binary.BigEndian.Uint32(h[4:8]) {
			break
		}
		from, to := binary.BigEndian.Uint64(h[8:16]), binary.BigEndian.Uint64(h[16:24])
		recs = append(recs, loc{from: from, to: to, seg: seg, off: off + recordHeader + spanBytes, n: len(body)})
		off += int64(recordHeader + n)
	}
	if len(recs) == 0 {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("redo: remove empty segment: %w", err)
		}
		return nil
	}
	if err := os.Truncate(path, off); err != nil {
		return fmt.Errorf("redo: truncate torn segment: %w", err)
	}
	seg.first, seg.size, seg.flushed = recs[0].from, off, off
	for _, rc := range recs {
		seg.last = max(seg.last, rc.to)
		l.mu.byFrom[rc.from] = len(l.mu.recs)
		l.mu.recs = append(l.mu.recs, rc)
	}
	l.mu.segs = append(l.mu.segs, seg)
	return nil
}

// readHead reads a segment's magic and tag and returns the offset after
// them, with false if they are not this log's.
func readHead(r *bufio.Reader, tag string) (int64, bool) {
	head := make([]byte, len(magic)+4)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:len(magic)]) != magic {
		return 0, false
	}
	n := binary.BigEndian.Uint32(head[len(magic):])
	if int(n) != len(tag) {
		return 0, false
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(r, got); err != nil || string(got) != tag {
		return 0, false
	}
	return int64(len(head) + len(got)), true
}

// Append writes a record. It is buffered: Flush (or a rotation, or
// Close) puts it in the file; a record cut short by a crash is dropped
// when the log is next opened.
func (l *Log) Append(rec Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return ErrClosed
	}
	if l.mu.cur == nil || l.mu.segs[len(l.mu.segs)-1].size >= l.segmentBytes {
		if err := l.rotateLocked(rec.From); err != nil {
			return err
		}
	}
	seg := l.mu.segs[len(l.mu.segs)-1]
	var h [recordHeader + spanBytes]byte
	binary.BigEndian.PutUint32(h[0:4], uint32(spanBytes+len(rec.Batch)))
	binary.BigEndian.PutUint64(h[8:16], rec.From)
	binary.BigEndian.PutUint64(h[16:24], rec.To)
	crc := crc32.Update(crc32.Checksum(h[recordHeader:], castagnoli), castagnoli, rec.Batch)
	binary.BigEndian.PutUint32(h[4:8], crc)
	if _, err := l.mu.w.Write(h[:]); err != nil {
		return fmt.Errorf("redo: append: %w", err)
	}
	if _, err := l.mu.w.Write(rec.Batch); err != nil {
		return fmt.Errorf("redo: append: %w", err)
	}
	l.mu.byFrom[rec.From] = len(l.mu.recs)
	l.mu.recs = append(l.mu.recs, loc{from: rec.From, to: rec.To, seg: seg, off: seg.size + int64(len(h)), n: len(rec.Batch)})
	seg.size += int64(len(h) + len(rec.Batch))
	seg.last = max(seg.last, rec.To)
	return nil
}

// rotateLocked closes the segment appended to and starts one whose first
// record starts from from.
func (l *Log) rotateLocked(from uint64) error {
	if err := l.closeCurLocked(); err != nil {
		return err
	}
	f, err := os.CreateTemp(l.dir, fmt.Sprintf("%020d-*%s", from, suffix))
	if err != nil {
		return fmt.Errorf("redo: new segment: %w", err)
	}
	path := f.Name()
	w := bufio.NewWriterSize(f, 1<<20)
	head := binary.BigEndian.AppendUint32([]byte(magic), uint32(len(l.tag)))
	head = append(head, l.tag...)
	if _, err := w.Write(head); err != nil {
		f.Close()
		return fmt.Errorf("redo: new segment: %w", err)
	}
	l.mu.cur, l.mu.w = f, w
	l.mu.segs = append(l.mu.segs, &segment{path: path, first: from, size: int64(len(head))})
	// The head is buffered: flushed stays 0 until the first flush.
	return nil
}

func (l *Log) closeCurLocked() error {
	if l.mu.cur == nil {
		return nil
	}
	err := l.flushLocked()
	if cerr := l.mu.cur.Close(); err == nil {
		err = cerr
	}
	l.mu.cur, l.mu.w = nil, nil
	if err != nil {
		return fmt.Errorf("redo: close segment: %w", err)
	}
	return nil
}

// Flush writes buffered records to their file.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	if l.mu.w == nil {
		return nil
	}
	if err := l.mu.w.Flush(); err != nil {
		return fmt.Errorf("redo: flush: %w", err)
	}
	seg := l.mu.segs[len(l.mu.segs)-1]
	seg.flushed = seg.size
	return nil
}

// Reach returns the highest index up to to that a chain of records
// starting from from reaches (each record starting where the last ended),
// and how many records that chain holds; from itself with 0 when no
// record starts there.
func (l *Log) Reach(from, to uint64) (uint64, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, n := from, 0
	for {
		i, ok := l.mu.byFrom[cur]
		if !ok || l.mu.recs[i].to > to || l.mu.recs[i].to <= cur {
			return cur, n
		}
		cur, n = l.mu.recs[i].to, n+1
	}
}

// Read calls fn with each record of the chain from from up to to (as
// Reach finds it), in order, and returns the index the chain reached. The
// batch passed to fn is fn's to keep. A segment pruned meanwhile ends the
// chain where it begins.
func (l *Log) Read(from, to uint64, fn func(Record) error) (uint64, error) {
	files := map[*segment]*os.File{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cur := from
	for {
		l.mu.Lock()
		i, ok := l.mu.byFrom[cur]
		if l.mu.closed || !ok || l.mu.recs[i].to > to || l.mu.recs[i].to <= cur {
			l.mu.Unlock()
			return cur, nil
		}
		rc := l.mu.recs[i]
		if rc.off+int64(rc.n) > rc.seg.flushed { // appended since the last flush
			if err := l.flushLocked(); err != nil {
				l.mu.Unlock()
				return cur, err
			}
		}
		f := files[rc.seg]
		if f == nil {
			var err error
			if f, err = os.Open(rc.seg.path); err != nil {
				l.mu.Unlock()
				return cur, nil // pruned
			}
			files[rc.seg] = f
		}
		l.mu.Unlock()
		batch := make([]byte, rc.n)
		if _, err := f.ReadAt(batch, rc.off); err != nil {
			return cur, fmt.Errorf("redo: read record %d-%d: %w", rc.from, rc.to, err)
		}
		if err := fn(Record{From: rc.from, To: rc.to, Batch: batch}); err != nil {
			return cur, err
		}
		cur = rc.to
	}
}

// PruneBelow removes the segments every record of which ends at or below
// index (never the one appended to) and returns how many it removed.
func (l *Log) PruneBelow(index uint64) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gone []*segment
	keep := l.mu.segs[:0]
	for i, s := range l.mu.segs {
		if s.last <= index && !(l.mu.cur != nil && i == len(l.mu.segs)-1) {
			gone = append(gone, s)
			continue
		}
		keep = append(keep, s)
	}
	if len(gone) == 0 {
		return 0, nil
	}
	l.mu.segs = keep
	doomed := map[*segment]bool{}
	for _, s := range gone {
		doomed[s] = true
	}
	recs := l.mu.recs[:0]
	clear(l.mu.byFrom)
	for _, rc := range l.mu.recs {
		if !doomed[rc.seg] {
			l.mu.byFrom[rc.from] = len(recs)
			recs = append(recs, rc)
		}
	}
	clear(l.mu.recs[len(recs):])
	l.mu.recs = recs
	var errs []error
	for _, s := range gone {
		errs = append(errs, os.Remove(s.path))
	}
	if err := errors.Join(errs...); err != nil {
		return len(gone), fmt.Errorf("redo: prune: %w", err)
	}
	return len(gone), nil
}

// Bytes returns the size of the log's segments.
func (l *Log) Bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int64
	for _, s := range l.mu.segs {
		n += s.size
	}
	return n
}

// Span returns the lowest From and highest To of the log's records; 0, 0
// when it has none.
func (l *Log) Span() (uint64, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.mu.segs) == 0 {
		return 0, 0
	}
	var hi uint64
	for _, s := range l.mu.segs {
		hi = max(hi, s.last)
	}
	return l.mu.segs[0].first, hi
}

// Close flushes and closes the log's files.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	l.mu.closed = true
	return l.closeCurLocked()
}

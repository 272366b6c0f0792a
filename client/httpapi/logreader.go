package httpapi

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/ordoplane/ordo/client/driver"
)

// logFile is one file of a task's log stream.
type logFile struct {
	// n is the rotation number: 0 for the current file, 1 for the newest
	// rotated one, and so on.
	n    int
	path string
	info os.FileInfo
}

// listLogs returns the files of the log stream whose current file is
// path, oldest first: <path>.N … <path>.1 (driver.RotatedPath), then <path>
// when it exists (a task that has not started has none).
func listLogs(path string) ([]logFile, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var files []logFile
	for _, e := range entries {
		n := 0
		if name := e.Name(); name != base {
			suffix, ok := strings.CutPrefix(name, base+".")
			if !ok {
				continue
			}
			v, err := strconv.Atoi(suffix)
			if err != nil || v < 1 || strconv.Itoa(v) != suffix {
				continue
			}
			n = v
		}
		p := filepath.Join(dir, e.Name())
		info, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue // rotated away since the listing
		}
		if err != nil {
			return nil, err
		}
		files = append(files, logFile{n: n, path: p, info: info})
	}
	slices.SortFunc(files, func(a, b logFile) int { return b.n - a.n })
	return files, nil
}

// find returns the index of the rotated file that is id (the same device
// and inode: a rotated file being copied is found as it grows), or -1.
func find(files []logFile, id os.FileInfo) int {
	if id == nil {
		return -1
	}
	for i, f := range files {
		if f.n > 0 && os.SameFile(f.info, id) {
			return i
		}
	}
	return -1
}

// sameFile reports whether a and b are the same complete rotated file, or
// both absent: the same inode, size and modification time. Rotated files
// do not change once copied, and the size and time tell apart a new file
// that reuses the inode of one a rotation dropped.
func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// statOrNil stats path; nil when it does not exist.
func statOrNil(path string) (os.FileInfo, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return info, err
}

// chunk is data read from one file of the stream.
type chunk struct {
	data []byte
	// file is the path it was read from; end the offset in that file
	// just after data.
	file string
	end  int64
}

// logReader reads one log stream of a task — its rotated files oldest
// first, then the current file — and keeps reading it as the task
// appends and the driver rotates (exec's copy-truncate: the current file
// is copied to <path>.1, older files move up one number, and the current
// file is truncated in place).
//
// Its position is a file and an offset in it. A rotated file is known by
// its identity (device and inode, kept across renames), so it is found
// again whatever number it has moved to. The current file keeps its
// identity across rotations, so the reader remembers instead which
// rotated file precedes it (after); when the newest rotated file is no
// longer that one, the current file's content it was reading has been
// copied to the rotated file that follows after, and the reader moves
// there at the same offset. More rotations between two reads than files
// kept lose output, as they lose it on disk.
type logReader struct {
	path string
	// rotated is the rotated file being read; nil when reading the
	// current file.
	rotated os.FileInfo
	// after is the newest rotated file when the reader moved to the
	// current file (nil: there was none).
	after os.FileInfo
	// off is the offset in the file being read.
	off int64
	// held is set when the reader was held at heldOff, the end of the
	// newest rotated file, waiting for a copy to end.
	held    bool
	heldOff int64
}

// newLogReader returns a reader of the stream of path positioned at
// offset bytes from its start (fromEnd false) or its end (fromEnd true),
// counted over every file of the stream; offsets past either end stop at
// it. It also returns the position's offset from the stream's start.
func newLogReader(path string, offset int64, fromEnd bool) (*logReader, int64, error) {
	files, err := listLogs(path)
	if err != nil {
		return nil, 0, err
	}
	var total int64
	for _, f := range files {
		total += f.info.Size()
	}
	target := min(offset, total)
	if fromEnd {
		target = max(total-offset, 0)
	}
	r := &logReader{path: path}
	var cum int64
	for _, f := range files {
		if f.n == 0 {
			break
		}
		if target < cum+f.info.Size() {
			r.rotated, r.off = f.info, target-cum
			return r, target, nil
		}
		cum += f.info.Size()
	}
	r.after = newest(files)
	r.off = target - cum
	return r, target, nil
}

// newest returns the newest rotated file of files, nil when there is none.
func newest(files []logFile) os.FileInfo {
	for _, f := range files {
		if f.n == 1 {
			return f.info
		}
	}
	return nil
}

// maxSteps bounds the moves between files of one read; each move goes to
// a newer file, so only a stream rotating under the reader takes many.
const maxSteps = 64

// read reads the next data of the stream into p, moving from file to
// file as each ends. A chunk without data means the reader has read
// everything there is for now.
//
// wait holds the reader, for one read, at the end of the newest rotated
// file while the current file is not smaller than it: the driver may
// still be copying it (a rotation is not done until the current file is
// truncated). Pass it while the task may still rotate its logs, when
// following.
func (r *logReader) read(p []byte, wait bool) (chunk, error) {
	for range maxSteps {
		files, err := listLogs(r.path)
		if err != nil {
			return chunk{}, err
		}
		if r.rotated != nil {
			c, moved, err := r.readRotated(files, p, wait)
			if err != nil || !moved {
				return c, err
			}
			continue
		}
		c, moved, err := r.readCurrent(files, p)
		if err != nil || !moved {
			return c, err
		}
	}
	return chunk{}, nil
}

// readRotated reads from the rotated file r.rotated; moved is true when
// the reader moved to another file instead.
func (r *logReader) readRotated(files []logFile, p []byte, wait bool) (chunk, bool, error) {
	i := find(files, r.rotated)
	if i < 0 {
		// Rotated away: continue with the oldest file there is.
		r.rotated, r.after, r.off = nil, nil, 0
		if len(files) > 0 && files[0].n > 0 {
			r.rotated = files[0].info
		}
		return chunk{}, true, nil
	}
	f := files[i]
	n, err := readFileAt(f.path, r.rotated, p, r.off)
	if errors.Is(err, errMoved) {
		return chunk{}, true, nil
	}
	if err != nil {
		return chunk{}, false, err
	}
	if n > 0 {
		r.off += int64(n)
		r.held = false
		return chunk{data: p[:n], file: f.path, end: r.off}, false, nil
	}
	// The end of this file: on to the next newer one.
	if f.n > 1 {
		next := i + 1
		if next < len(files) && files[next].n > 0 {
			r.rotated, r.off = files[next].info, 0
			return chunk{}, true, nil
		}
		return chunk{}, false, nil // a rotation is renaming files: later
	}
	if wait {
		// The current file follows once the rotation that made this file
		// is done, which it is once the current file was truncated; the
		// copy may have ended after the read above, so read again.
		cur, err := statOrNil(r.path)
		if err != nil {
			return chunk{}, false, err
		}
		if cur != nil && cur.Size() > 0 && cur.Size() >= r.off && !(r.held && r.heldOff == r.off) {
			// Not truncated yet. Hold for one read at most: a copy grows
			// the file between two reads; one that did not grow is done
			// (and the current file only outgrew it).
			r.held, r.heldOff = true, r.off
			return chunk{}, false, nil
		}
		n, err := readFileAt(f.path, r.rotated, p, r.off)
		if errors.Is(err, errMoved) {
			return chunk{}, true, nil
		}
		if err != nil {
			return chunk{}, false, err
		}
		if n > 0 {
			r.off += int64(n)
			return chunk{data: p[:n], file: f.path, end: r.off}, false, nil
		}
	}
	info, err := statOrNil(f.path)
	if err != nil {
		return chunk{}, false, err
	}
	if info == nil || !os.SameFile(info, r.rotated) {
		return chunk{}, true, nil // rotated meanwhile: find it again
	}
	r.after, r.rotated, r.off, r.held = info, nil, 0, false
	return chunk{}, true, nil
}

// readCurrent reads from the current file; moved is true when the reader
// moved to a rotated file instead.
func (r *logReader) readCurrent(files []logFile, p []byte) (chunk, bool, error) {
	if nw := newest(files); !sameFile(nw, r.after) {
		r.toCopy(files)
		return chunk{}, true, nil
	}
	cur, err := os.Open(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return chunk{}, false, nil // the task has written nothing yet
	}
	if err != nil {
		return chunk{}, false, err
	}
	defer cur.Close()
	info, err := cur.Stat()
	if err != nil {
		return chunk{}, false, err
	}
	if info.Size() < r.off {
		// Truncated: by a rotation, or in place when no rotated file is
		// kept.
		nw, err := statOrNil(driver.RotatedPath(r.path, 1))
		if err != nil {
			return chunk{}, false, err
		}
		if sameFile(nw, r.after) {
			r.off = 0 // truncated in place: no rotated file is kept
		} // else rotated since the listing: the next round moves
		return chunk{}, true, nil
	}
	n, err := cur.ReadAt(p, r.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return chunk{}, false, err
	}
	// A rotation during the read may have truncated what was read: read
	// it again from the copy.
	nw, err := statOrNil(driver.RotatedPath(r.path, 1))
	if err != nil {
		return chunk{}, false, err
	}
	if !sameFile(nw, r.after) {
		return chunk{}, true, nil
	}
	if n == 0 {
		return chunk{}, false, nil
	}
	r.off += int64(n)
	return chunk{data: p[:n], file: r.path, end: r.off}, false, nil
}

// toCopy moves the reader, which was reading the current file, to the
// rotated file the current file's content was copied to, at the same
// offset: the one that follows r.after; or the oldest, when there was no
// rotated file or r.after was rotated away (as many rotations as rotated
// files kept leave the copy the oldest; more lose it).
func (r *logReader) toCopy(files []logFile) {
	r.rotated = nil
	for i, f := range files {
		if f.n > 0 && sameFile(f.info, r.after) && i+1 < len(files) && files[i+1].n > 0 {
			r.rotated = files[i+1].info
			return
		}
	}
	if len(files) > 0 && files[0].n > 0 {
		r.rotated = files[0].info
		return
	}
	r.after = nil // the rotated files are gone: read on in the current one
}

// errMoved is a file that is no longer at the path it was listed at.
var errMoved = errors.New("log file moved")

// readFileAt reads from the file at path, which must be id, at off.
func readFileAt(path string, id os.FileInfo, p []byte, off int64) (int, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, errMoved
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !os.SameFile(info, id) {
		return 0, errMoved
	}
	n, err := f.ReadAt(p, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

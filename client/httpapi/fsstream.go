package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strconv"
)

// Nomad's file events of a stream.
const (
	fileTruncated = "file truncated"
	fileDeleted   = "file deleted"
)

// fsStream is GET /v1/client/fs/stream/{alloc_id}?path=&offset=&origin=&follow=,
// Nomad's stream of one file of the allocation: its bytes from offset
// (from the start, or the end with origin=end) as StreamFrames, then,
// following (the default), what is appended, read every PollInterval; a
// file cut shorter is read again from its start after a "file truncated"
// frame, a removed one ends the stream after a "file deleted" frame. A
// silent stream sends an empty frame every HeartbeatInterval.
func (s *Server) fsStream(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var offset int64
	if v := q.Get("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, invalid("offset", "%q is not a byte count", v))
			return
		}
		offset = n
	}
	fromEnd := false
	switch o := q.Get("origin"); o {
	case "", "start":
	case "end":
		fromEnd = true
	default:
		writeError(w, invalid("origin", "%q is not start or end", o))
		return
	}
	follow := true
	if v := q.Get("follow"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, invalid("follow", "%q is not true or false", v))
			return
		}
		follow = b
	}
	p, f, fi, err := s.openAllocFile(r) // fs.go
	if err != nil {
		writeError(w, err)
		return
	}
	defer p.root.Close()
	defer f.Close()
	if fromEnd {
		offset = fi.Size() - offset
	}
	offset = min(max(offset, 0), fi.Size())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	out := &fileStream{path: p, f: f, offset: offset, enc: json.NewEncoder(w),
		flush: func() { _ = http.NewResponseController(w).Flush() }}
	out.flush()
	if err := s.followFile(r.Context(), out, follow); err != nil {
		s.log.Debug("file stream ended", "alloc_id", r.PathValue("alloc_id"), "path", p.rel, "err", err)
	}
}

// fileStream is one file being streamed.
type fileStream struct {
	path allocPath
	f    interface {
		io.ReaderAt
		Stat() (fs.FileInfo, error)
	}
	offset int64
	enc    *json.Encoder
	flush  func()
}

// sendNew sends what the file holds past the offset; sent says whether
// anything was. A file cut shorter than the offset is announced and read
// again from its start.
func (st *fileStream) sendNew(buf []byte) (sent bool, err error) {
	fi, err := st.f.Stat()
	if err != nil {
		return false, err
	}
	if fi.Size() < st.offset {
		st.offset = 0
		if err := st.enc.Encode(StreamFrame{File: st.path.rel, FileEvent: fileTruncated}); err != nil {
			return false, err
		}
		sent = true
	}
	for st.offset < fi.Size() {
		n, err := st.f.ReadAt(buf[:min(int64(len(buf)), fi.Size()-st.offset)], st.offset)
		if n > 0 {
			st.offset += int64(n)
			if err := st.enc.Encode(StreamFrame{Offset: st.offset, Data: buf[:n], File: st.path.rel}); err != nil {
				return sent, err
			}
			sent = true
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return sent, err
		}
		if n == 0 {
			break
		}
	}
	return sent, nil
}

// followFile sends the file, then, following, what is appended every
// PollInterval until the file is removed or ctx ends.
func (s *Server) followFile(ctx context.Context, st *fileStream, follow bool) error {
	buf := make([]byte, frameSize)
	var idle int64
	for {
		sent, err := st.sendNew(buf)
		if err != nil {
			return err
		}
		if sent {
			st.flush()
			idle = 0
		}
		if !follow {
			return nil
		}
		if _, err := st.path.root.Stat(st.path.rel); err != nil {
			_ = st.enc.Encode(StreamFrame{File: st.path.rel, FileEvent: fileDeleted})
			st.flush()
			return fmt.Errorf("file %s: %w", st.path.rel, err)
		}
		if !sent {
			if idle += int64(s.cfg.PollInterval); idle >= int64(s.cfg.HeartbeatInterval) {
				if err := st.enc.Encode(StreamFrame{}); err != nil {
					return err
				}
				st.flush()
				idle = 0
			}
		}
		if err := s.pollWait(ctx); err != nil { // logs.go
			return err
		}
	}
}

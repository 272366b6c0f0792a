package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/ordoplane/ordo/storage/kv"
)

// spooledSnapshot is a snapshot file written whole to a temporary file,
// with its digest in the form of Nomad's Digest header.
type spooledSnapshot struct {
	f      *os.File
	size   int64
	digest string
}

// spoolSnapshot saves src through snaps to a temporary file, hashing it
// on the way: the Digest header (sha-256=<base64>) that nomad/api's
// Operator().Snapshot checks must be sent before the body.
func spoolSnapshot(snaps Snapshots, src kv.Reader) (*spooledSnapshot, error) {
	f, err := os.CreateTemp("", "ordo-snapshot-*")
	if err != nil {
		return nil, fmt.Errorf("snapshot spool: %w", err)
	}
	sp := &spooledSnapshot{f: f}
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(f, h)}
	if err := snaps.Save(cw, src); err != nil {
		sp.close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		sp.close()
		return nil, fmt.Errorf("snapshot spool: %w", err)
	}
	sp.size, sp.digest = cw.n, "sha-256="+base64.StdEncoding.EncodeToString(h.Sum(nil))
	return sp, nil
}

// send answers the file with its Digest and length; the headers already
// set on w stay.
func (sp *spooledSnapshot) send(w http.ResponseWriter) error {
	w.Header().Set("Digest", sp.digest)
	w.Header().Set("Content-Length", fmt.Sprint(sp.size))
	w.WriteHeader(http.StatusOK)
	_, err := io.Copy(w, sp.f)
	return err
}

// close removes the temporary file.
func (sp *spooledSnapshot) close() {
	sp.f.Close()
	os.Remove(sp.f.Name())
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

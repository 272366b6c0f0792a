package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/ordoplane/ordo/clock"
	"github.com/ordoplane/ordo/projections/fsm"
	"github.com/ordoplane/ordo/storage/raftlog"
	"github.com/ordoplane/ordo/storage/snapshots"
	"github.com/prometheus/client_golang/prometheus"
)

// ErrInvalid is wrapped by the error of a restore refused for its file:
// not a snapshot file, damaged, truncated, or of a format this ordo does
// not read. Nothing was installed.
var ErrInvalid = errors.New("ordo: invalid snapshot file")

// RestoreConfig configures a Restorer.
type RestoreConfig struct {
	// Node is the server's raft node; a restore runs on the leader only.
	Node *raftlog.Node
	// Dir is where a restore writes the payload it hands raft, removed
	// once installed (a server's scratch directory).
	Dir string
	// Restored, when set, is called once a restore is installed, before
	// Restore returns: the agent restarts its leader-only processors
	// there, so they start again from the restored state.
	Restored func()
	// Logger; default slog.Default().
	Logger *slog.Logger
	// Registerer receives the restore metrics; nil registers none.
	Registerer prometheus.Registerer
	// Clock times restores for ordo_snapshot_restore_seconds; default
	// clock.System{}.
	Clock clock.Clock
	// CheckRow, when set, is called with each row of the file before any
	// of it reaches raft; an error refuses the file as ErrInvalid (the
	// agent refuses a snapshot a newer ordo saved:
	// fsm.FSM.CheckSavedRow).
	CheckRow func(k, v []byte) error
}

// Result is what a restore installed.
type Result struct {
	// Index is the raft index the saved state now stands at.
	Index uint64
	// SnapshotIndex is the index the state was saved at, ClusterID the
	// cluster it was saved from.
	SnapshotIndex uint64
	ClusterID     string
	// SavedBy is the server that saved it, SavedAt when (Unix
	// nanoseconds, 0 when the file does not say).
	SavedBy string
	SavedAt int64
	// Rows and Bytes are the file's rows and size, Checksum its SHA-256.
	Rows     uint64
	Bytes    int64
	Checksum string
}

// Restorer restores snapshot files into the cluster, one at a time.
type Restorer struct {
	cfg     RestoreConfig
	mu      sync.Mutex // one restore at a time
	total   *prometheus.CounterVec
	seconds prometheus.Histogram
}

// NewRestorer returns a Restorer.
func NewRestorer(cfg RestoreConfig) *Restorer {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	r := &Restorer{cfg: cfg,
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ordo_snapshot_restores_total",
			Help: "Operator snapshot restores by result: installed, invalid (the file was refused) or failed."}, []string{"result"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ordo_snapshot_restore_seconds",
			Help: "Time an installed snapshot restore took, the file's upload and check included.", Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}),
	}
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(r.total, r.seconds)
	}
	// A stop in the middle of a restore leaves its payload behind.
	if left, _ := filepath.Glob(filepath.Join(cfg.Dir, payloadPattern)); len(left) > 0 {
		for _, p := range left {
			if err := os.Remove(p); err != nil {
				cfg.Logger.Warn("remove a restore payload a stop left", "path", p, "err", err)
			}
		}
	}
	return r
}

// payloadPattern names the payload files a restore writes in
// RestoreConfig.Dir.
const payloadPattern = "restore-*.payload"

// Restore reads a snapshot file from body, checks it whole and installs
// it on the cluster (see the package doc). A file refused for what it
// holds returns an error wrapping ErrInvalid, and nothing is installed.
func (r *Restorer) Restore(ctx context.Context, body io.Reader) (Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.cfg.Clock.Now()
	res, err := r.restore(ctx, body)
	switch {
	case errors.Is(err, ErrInvalid):
		r.total.WithLabelValues("invalid").Inc()
		r.cfg.Logger.Warn("snapshot restore refused: invalid file", "err", err)
	case err != nil:
		r.total.WithLabelValues("failed").Inc()
		r.cfg.Logger.Error("snapshot restore failed", "err", err, "index", res.Index)
	default:
		r.total.WithLabelValues("installed").Inc()
		r.seconds.Observe(r.cfg.Clock.Now().Sub(start).Seconds())
		r.cfg.Logger.Warn("snapshot restored: the cluster's state was replaced", "index", res.Index,
			"snapshot_index", res.SnapshotIndex, "snapshot_cluster", res.ClusterID, "rows", res.Rows, "sha256", res.Checksum)
	}
	return res, err
}

func (r *Restorer) restore(ctx context.Context, body io.Reader) (Result, error) {
	if !r.cfg.Node.IsLeader() {
		return Result{}, raftlog.ErrNotLeader
	}
	if err := os.MkdirAll(r.cfg.Dir, 0o755); err != nil {
		return Result{}, fmt.Errorf("restore: %w", err)
	}
	f, err := os.CreateTemp(r.cfg.Dir, payloadPattern)
	if err != nil {
		return Result{}, fmt.Errorf("restore: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size, sum, err := writeCheckedPayload(f, body, r.cfg.CheckRow)
	if err != nil {
		return Result{}, err
	}
	h := sum.Header
	res := Result{SnapshotIndex: h.Index, ClusterID: h.ClusterID, SavedBy: h.Server, Rows: sum.Rows, Bytes: sum.Bytes, Checksum: sum.Checksum}
	if !h.Created.IsZero() {
		res.SavedAt = h.Created.UnixNano()
	}
	res.Index, err = r.cfg.Node.Restore(ctx, f, size, func(index uint64) error {
		if err := fsm.SetRestoreIndex(f, index); err != nil {
			return err
		}
		return f.Sync()
	})
	if res.Index != 0 && r.cfg.Restored != nil {
		r.cfg.Restored() // installed, even if at another index than asked
	}
	return res, err
}

// writePayload reads the snapshot file in body into the raft payload f
// and returns the payload's size and the file's summary; a file that does
// not check out whole returns an error wrapping ErrInvalid.
func writePayload(f *os.File, body io.Reader) (int64, snapshots.Summary, error) {
	return writeCheckedPayload(f, body, nil)
}

// writeCheckedPayload is writePayload calling check, when set, with each
// row first: its error refuses the file (ErrInvalid).
func writeCheckedPayload(f *os.File, body io.Reader, check func(k, v []byte) error) (int64, snapshots.Summary, error) {
	p, err := fsm.NewRestorePayload(f)
	if err != nil {
		return 0, snapshots.Summary{}, fmt.Errorf("restore: %w", err)
	}
	var writeErr, checkErr error
	sum, err := snapshots.Verify(body, func(k, v []byte) error {
		if check != nil {
			if checkErr = check(k, v); checkErr != nil {
				return checkErr
			}
		}
		writeErr = p.Set(k, v)
		return writeErr
	})
	switch {
	case checkErr != nil:
		return 0, sum, fmt.Errorf("%w: %w", ErrInvalid, checkErr)
	case writeErr != nil:
		return 0, sum, fmt.Errorf("restore: write payload: %w", writeErr)
	case err != nil && snapshots.IsInvalid(err):
		return 0, sum, fmt.Errorf("%w: %w", ErrInvalid, err)
	case err != nil:
		return 0, sum, fmt.Errorf("restore: read the file: %w", err)
	case sum.Rows == 0:
		return 0, sum, fmt.Errorf("%w: it holds no rows", ErrInvalid)
	}
	if err := p.Close(); err != nil {
		return 0, sum, fmt.Errorf("restore: write payload: %w", err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, sum, fmt.Errorf("restore: %w", err)
	}
	return size, sum, nil
}

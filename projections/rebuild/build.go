package rebuild

import (
	"context"
	"fmt"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// scratchRebuild rebuilds projs from the archive of src through index to
// into the empty store dst (Verify's scratch space, a replay's fresh
// store), a lane per projection. The lanes write into a scratch store of
// dst's, whose tables dst then ingests whole as table files: dst's LSM
// flushes and compacts none of the rows, and ends with them in one level.
func scratchRebuild(ctx context.Context, src kv.Reader, dst *kv.Store, projs []projections.Projection, to uint64, parallel int, busy func() bool, obs func(Stats)) (Stats, error) {
	b := dst.Batch()
	if err := projections.CheckVersions(projections.NewView(b), projs); err != nil {
		b.Close()
		return Stats{}, err
	}
	if err := b.Commit(); err != nil {
		return Stats{}, err
	}
	scratch, err := dst.OpenScratch()
	if err != nil {
		return Stats{}, err
	}
	defer scratch.Close()
	l := newLanes(scratch, true, projs, ctx.Err)
	defer l.close()
	// Rows no lane reads stay in the lanes' logs, out of the scratch
	// store, and go straight into the table files.
	l.keepRowsInMemory()
	st, workers, err := buildWith(l, src, to, parallel, busy, obs)
	if err != nil {
		return st, err
	}
	// The lanes wrote rows and table indexes only (their writers refuse
	// any other key), all of them committed now.
	var tables []string
	for _, p := range projs {
		tables = append(tables, p.Tables()...)
	}
	files, err := tableFiles(scratch, dst, tables, false, workers, l.logs())
	if err != nil {
		return st, fmt.Errorf("rebuild: %w", err)
	}
	wb := dst.WriteBatch()
	if err := wb.Set(layout.AppliedKey, kv.Uint64Value(st.Last)); err != nil {
		wb.Close()
		discardFiles(files)
		return st, err
	}
	_, err = dst.Replace(files, wb)
	return st, err
}

// BuildInto replays projs from the archive of src through index to into
// the empty store scratch, a projection per goroutine, at most parallel at
// once while busy says so (see Build.Limit), reporting to obs after each
// batch a projection commits: a verify's scratch build, which nothing
// switches live. It returns what it replayed.
func BuildInto(ctx context.Context, src kv.Reader, scratch *kv.Store, projs []projections.Projection, to uint64, parallel int, busy func() bool, obs func(Stats)) (Stats, error) {
	l := newLanes(scratch, true, projs, ctx.Err)
	defer l.close()
	st, _, err := buildWith(l, src, to, parallel, busy, obs)
	return st, err
}

// buildWith replays through the lanes l; it returns what it replayed and
// how many goroutines the lanes leave room for now (lanes.workers).
func buildWith(l *lanes, src kv.Reader, to uint64, parallel int, busy func() bool, obs func(Stats)) (Stats, int, error) {
	l.limit(parallel, busy)
	l.progress = obs
	if err := l.run(src, 1, to); err != nil {
		return l.stats(), 0, err
	}
	return l.stats(), l.workers(), nil
}

package rebuild

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/internal/layout"
	"github.com/ordoplane/ordo/storage/kv"
)

// tableFiles writes the rows of tables, and their table indexes, from src
// (and the rows logs hold, newer than src's: rowLog) into table files of
// dst: a file per run of tables (in key order, of
// about equal size; as many runs as workers, and at least two) and one of
// the indexes, over key ranges that do not overlap (a run split where
// its tables go from read only by scans to not: scanRuns), written (and synced)
// by up to workers goroutines. With replace,
// each table's rows in dst are deleted first, and the index of a table
// src has none of is deleted. Fewer, larger files make the ingest that
// takes them quicker: it holds the switch.
func tableFiles(src *kv.Store, dst *kv.Store, tables []string, replace bool, workers int, logs []*rowLog) ([]*kv.TableFile, error) {
	tables = slices.Compact(slices.Sorted(slices.Values(tables)))
	workers = max(1, workers)
	// At least two runs: the ingest of one file of every table took the
	// switch of a busy server's rebuild 20 ms, of two 7-9 ms.
	runs, err := tableRuns(src, tables, max(2, workers), logs)
	if err != nil {
		return nil, err
	}
	runs = scanRuns(runs)
	files := make([]*kv.TableFile, len(runs)+1)
	errs := make([]error, len(runs)+1)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				files[i], errs[i] = tableFile(src, dst, runs[i], replace, logs)
			}
		}()
	}
	for i := range runs {
		next <- i
	}
	close(next)
	files[len(runs)], errs[len(runs)] = indexFile(src, dst, tables, replace)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		discardFiles(files)
		return nil, err
	}
	return files, nil
}

// tableRuns splits tables (sorted) into at most n runs of consecutive
// tables holding about as many bytes each in src and logs.
func tableRuns(src *kv.Store, tables []string, n int, logs []*rowLog) ([][]string, error) {
	sizes := make([]uint64, len(tables))
	var total uint64
	for i, t := range tables {
		p := layout.TablePrefix(t)
		size, err := src.EstimateBytes(p, kv.PrefixEnd(p))
		if err != nil {
			return nil, err
		}
		for _, l := range logs {
			size += l.tables[t]
		}
		sizes[i] = size + 1 // an empty table still counts
		total += sizes[i]
	}
	var runs [][]string
	var run []string
	var acc uint64
	for i, t := range tables {
		run = append(run, t)
		acc += sizes[i]
		if len(runs) < n-1 && acc*uint64(n) >= total*uint64(len(runs)+1) {
			runs, run = append(runs, run), nil
		}
	}
	if len(run) > 0 {
		runs = append(runs, run)
	}
	return runs, nil
}

// scanRuns splits each run of tables where it goes from tables read only
// by scans (ScanOnly) to others or back, so that a file holds one kind
// and a file of the first kind is written without Bloom filters.
func scanRuns(runs [][]string) [][]string {
	var out [][]string
	for _, run := range runs {
		start := 0
		for i := 1; i <= len(run); i++ {
			if i == len(run) || projections.IsScanOnly(run[i]) != projections.IsScanOnly(run[start]) {
				out = append(out, run[start:i])
				start = i
			}
		}
	}
	return out
}

// tableFile writes the rows of tables (sorted) from src, with those logs
// hold over them, into a finished table file of dst, each table after a
// deletion of dst's rows in it when replace is set.
func tableFile(src kv.Reader, dst *kv.Store, tables []string, replace bool, logs []*rowLog) (*kv.TableFile, error) {
	newFile := dst.NewTableFile
	if projections.IsScanOnly(tables[0]) { // a run of scanRuns: all of them
		newFile = dst.NewScanTableFile
	}
	f, err := newFile()
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		live := layout.TablePrefix(t)
		if replace {
			err = f.DeleteRange(live, kv.PrefixEnd(live))
		}
		if err == nil {
			err = copyTable(src, f, live, logs)
		}
		if err != nil {
			f.Discard()
			return nil, fmt.Errorf("table %s: %w", t, err)
		}
	}
	if err := f.Finish(); err != nil {
		f.Discard()
		return nil, err
	}
	return f, nil
}

// copyTable writes the rows of src under prefix into f, merged with the
// rows logs hold there: a logged row is newer than src's at its key, and a
// logged deletion leaves the key out.
func copyTable(src kv.Reader, f *kv.TableFile, prefix []byte, logs []*rowLog) error {
	end := kv.PrefixEnd(prefix)
	m := mergeRows(logs, prefix, end)
	more := m.next()
	// emit writes the logged row the merge stands at and moves on.
	emit := func() error {
		var err error
		if m.value != nil {
			err = f.Set(m.key, m.value)
		}
		more = m.next()
		return err
	}
	// logged writes the logged rows before k (all of them: k nil).
	logged := func(k []byte) error {
		for more && (k == nil || bytes.Compare(m.key, k) < 0) {
			if err := emit(); err != nil {
				return err
			}
		}
		return nil
	}
	err := src.Scan(prefix, end, false, func(k, v []byte) error {
		if err := logged(k); err != nil {
			return err
		}
		if more && bytes.Equal(m.key, k) {
			return emit()
		}
		return f.Set(k, v)
	})
	if err != nil {
		return err
	}
	return logged(nil)
}

// indexFile writes the table indexes of tables (sorted) from src into a
// finished table file of dst; with replace, the index of a table src has
// none of is deleted.
func indexFile(src kv.Reader, dst *kv.Store, tables []string, replace bool) (*kv.TableFile, error) {
	f, err := dst.NewTableFile()
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		var idx []byte
		idx, err = src.Get(layout.TableIndexKey(t))
		switch {
		case err == nil:
			err = f.Set(layout.TableIndexKey(t), idx)
		case errors.Is(err, kv.ErrNotFound) && replace:
			err = f.Delete(layout.TableIndexKey(t))
		case errors.Is(err, kv.ErrNotFound):
			err = nil
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = f.Finish()
	}
	if err != nil {
		f.Discard()
		return nil, fmt.Errorf("table indexes: %w", err)
	}
	return f, nil
}

// discardFiles discards the table files of fs not taken yet (nil ones
// skipped).
func discardFiles(fs []*kv.TableFile) {
	for _, f := range fs {
		if f != nil {
			f.Discard()
		}
	}
}

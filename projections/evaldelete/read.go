package evaldelete

import (
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/evals"
)

// rowScanFactor times the evals of a chunk bounds the eval rows readEvals
// reads in one range scan between the smallest and largest of their ids;
// a range holding more (evals of other times in between) is read eval by
// eval instead.
const rowScanFactor = 4

// creationKeys returns up to n creation keys of evals in [from, to) ("" to:
// no bound), in creation order.
func creationKeys(v projections.View, from, to string, n int) ([]string, error) {
	keys := make([]string, 0, n)
	err := v.ScanFrom(evals.ByCreateTable, "", from, false, func(key string, _ projections.Row) error {
		if (to != "" && key >= to) || len(keys) == n {
			return errStop
		}
		keys = append(keys, key)
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return keys, nil
}

// readEvals reads the evals of the creation keys keys for f (only their
// head when f needs no more, see readEval): out[i] is the eval of keys[i],
// nil when it does not exist. When eval ids are minted in time order, the
// evals of a stretch of the creation order lie close together in the
// evals table: one range scan between the smallest and largest id reads
// them for a fraction of the cost of a point read each (which seeks every
// level of the LSM). A range holding more than rowScanFactor rows per eval
// (random ids, such as the pipeline's UUIDs) falls back to point reads;
// both give the same evals.
func readEvals(v projections.View, f *Filter, keys []string) ([]*events.Evaluation, error) {
	out := make([]*events.Evaluation, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	at := make(map[string]int, len(keys))
	ids := make([]string, len(keys))
	for i, key := range keys {
		id, err := keyID(key)
		if err != nil {
			return nil, err
		}
		ids[i] = id
		at[id] = i
	}
	if len(keys) > 1 {
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		lo, hi := sorted[0], sorted[len(sorted)-1]
		n, limit, complete := 0, len(keys)*rowScanFactor, true
		err := v.ScanFrom(evals.Table, "", lo, false, func(id string, r projections.Row) error {
			if id > hi {
				return errStop
			}
			if n++; n > limit {
				complete = false
				return errStop
			}
			i, ok := at[id]
			if !ok {
				return nil
			}
			e, err := decodeEval(f, id, r)
			if err != nil {
				return err
			}
			out[i] = e
			return nil
		})
		if err != nil && !errors.Is(err, errStop) {
			return nil, fmt.Errorf("evals %s..%s: %w", lo, hi, err)
		}
		if complete {
			return out, nil
		}
		clear(out)
	}
	for i, id := range ids {
		e, err := readEval(v, f, id)
		if errors.Is(err, projections.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// decodeEval decodes the eval row r of id for f: only its head when f
// needs no more (a nil filter or one compiled to the fast path).
func decodeEval(f *Filter, id string, r projections.Row) (*events.Evaluation, error) {
	if f != nil && f.fast == nil {
		e := &events.Evaluation{}
		if err := msgpack.Unmarshal(r.Value, e); err != nil {
			return nil, fmt.Errorf("decode eval row %q: %w", id, err)
		}
		e.CreateIndex, e.ModifyIndex = r.CreateIndex, r.ModifyIndex
		return e, nil
	}
	h, err := decodeHead(r.Value)
	if err != nil {
		return nil, fmt.Errorf("decode eval row %q: %w", id, err)
	}
	return &events.Evaluation{ID: h.ID, Namespace: h.Namespace, Type: h.Type, TriggeredBy: h.TriggeredBy, JobID: h.JobID,
		NodeID: h.NodeID, DeploymentID: h.DeploymentID, Status: h.Status}, nil
}

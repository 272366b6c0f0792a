package jobs

import "github.com/ordoplane/ordo/projections"

// GetVersion returns version ver of job id in ns as Versions shows it, or
// projections.ErrNotFound when the job or that version is not kept.
func GetVersion(v projections.View, ns, id string, ver uint64) (*Job, error) {
	cur, err := Get(v, ns, id)
	if err != nil {
		return nil, err
	}
	if cur.Version == ver {
		return cur, nil
	}
	r, err := v.Get(VersionsTable, VersionKey(ns, id, ver))
	if err != nil {
		return nil, err
	}
	j, err := fromRow(r)
	if err != nil {
		return nil, err
	}
	j.CreateIndex, j.Status = cur.CreateIndex, cur.Status
	return j, nil
}

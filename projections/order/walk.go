package order

import (
	"bytes"
	"sort"

	"github.com/ordoplane/ordo/projections"
)

// Walk calls fn with the id and row of each row of table in creation
// order (newest first when reverse is set), starting at the key from (""
// for the first). byCreate is table's creation-order index. With an id
// prefix it reads the matching rows of table by id and orders them itself,
// so a prefix never walks the whole index. fn may return an error to stop;
// Walk returns it.
func Walk(v projections.View, table, byCreate, idPrefix, from string, reverse bool, fn func(id string, r projections.Row) error) error {
	if idPrefix == "" {
		return v.ScanFrom(byCreate, "", from, reverse, func(key string, _ projections.Row) error {
			_, id, err := Split(key)
			if err != nil {
				return err
			}
			r, err := v.Get(table, id)
			if err != nil {
				return err
			}
			return fn(id, r)
		})
	}
	type item struct {
		key, id string
		row     projections.Row
	}
	var items []item
	err := v.Scan(table, idPrefix, false, func(id string, r projections.Row) error {
		r.Value = bytes.Clone(r.Value) // the scan reuses its buffers after fn returns
		items = append(items, item{Key(r.CreateIndex, id), id, r})
		return nil
	})
	if err != nil {
		return err
	}
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	if reverse {
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	}
	for _, it := range items {
		if from != "" && ((!reverse && it.key < from) || (reverse && it.key > from)) {
			continue
		}
		if err := fn(it.id, it.row); err != nil {
			return err
		}
	}
	return nil
}

// Sorted returns the ids a secondary index holds under prefix (its keys
// are "<prefix><id>") with their rows in table, in creation order.
func Sorted(v projections.View, table, index, prefix string) ([]string, []projections.Row, error) {
	type item struct {
		key, id string
		row     projections.Row
	}
	var items []item
	err := v.Scan(index, prefix, false, func(key string, _ projections.Row) error {
		id := key[len(prefix):]
		r, err := v.Get(table, id)
		if err != nil {
			return err
		}
		items = append(items, item{Key(r.CreateIndex, id), id, r})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
	ids := make([]string, len(items))
	rows := make([]projections.Row, len(items))
	for i, it := range items {
		ids[i], rows[i] = it.id, it.row
	}
	return ids, rows, nil
}

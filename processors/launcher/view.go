package launcher

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"

	"github.com/ordoplane/ordo/events"
	"github.com/ordoplane/ordo/projections"
	"github.com/ordoplane/ordo/projections/launcher"
	"github.com/ordoplane/ordo/storage/archive"
	"github.com/ordoplane/ordo/storage/kv"
)

// maxCatchUp bounds how many log entries a runner's view catches up on
// by reading the archive; a view further behind (a long-stopped runner)
// is loaded again from the projection.
const maxCatchUp = 100_000

// openView is a runner's incremental view of the open node requests, in
// handling order (relative priority, then creation), and of its
// provider's instances. It is loaded once from the projection; each pass
// then reads only the archive's events since the index it holds and
// re-reads just the requests and instances they name (none for one they
// delete), so a pass over a large backlog, or a provider holding many
// instances, no longer reads every open request and every instance.
//
// It also remembers the requests the runner looked at and could neither
// serve nor decline for a reason that only a provider change or a new
// quota can lift (it yielded to a better provider, or it is paused):
// those are skipped until the request, the providers or the quota change.
type openView struct {
	// provider names the provider whose instances the view holds.
	provider string
	// at is the applied index the view reflects; 0 before the first load.
	at        uint64
	byID      map[string]*launcher.Request
	requested []*launcher.Request
	pending   []*launcher.Request
	// insts are the provider's instances by id; sorted lists them by id,
	// nil when insts changed since.
	insts  map[string]*launcher.Instance
	sorted []*launcher.Instance
	// waiting maps a request id to its modify index when it was set aside
	// under key.
	waiting map[string]uint64
	key     waitKey
	// checked maps a request id to its modify index when the runner found
	// that its pools and quota could hold it (nothing to decline) under
	// checkKey: while paused, that is all a runner does with it (P7).
	checked  map[string]uint64
	checkKey string
}

// waitKey is what a set-aside request waits on: the providers (their
// names and modify indexes) and the quota.
type waitKey struct {
	providers uint64
	quota     string
}

func newOpenView(provider string) *openView {
	return &openView{provider: provider, byID: map[string]*launcher.Request{}, insts: map[string]*launcher.Instance{},
		waiting: map[string]uint64{}, checked: map[string]uint64{}}
}

// order is the handling order: relative priority, creation, id.
func order(a, b *launcher.Request) int {
	if c := cmp.Compare(a.RelativePriority, b.RelativePriority); c != 0 {
		return c
	}
	if c := cmp.Compare(a.CreateIndex, b.CreateIndex); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

func (o *openView) list(state string) *[]*launcher.Request {
	if state == events.RequestPending {
		return &o.pending
	}
	return &o.requested
}

func (o *openView) remove(id string) {
	old, ok := o.byID[id]
	if !ok {
		return
	}
	l := o.list(old.State)
	if i, found := slices.BinarySearchFunc(*l, old, order); found {
		*l = slices.Delete(*l, i, i+1)
	}
	delete(o.byID, id)
	delete(o.waiting, id)
	delete(o.checked, id)
}

func (o *openView) put(r *launcher.Request) {
	o.remove(r.ID)
	if !r.Open() {
		return
	}
	l := o.list(r.State)
	i, _ := slices.BinarySearchFunc(*l, r, order)
	*l = slices.Insert(*l, i, r)
	o.byID[r.ID] = r
}

// sync brings the view to snap's applied index and returns how many
// requests it re-read.
func (o *openView) sync(snap kv.Reader, v projections.View) (int, error) {
	to, err := v.AppliedIndex()
	if err != nil {
		return 0, err
	}
	if o.at == 0 || to < o.at || to-o.at > maxCatchUp {
		return o.load(v, to)
	}
	if to == o.at {
		return 0, nil
	}
	// dirty maps a request or instance the events name to whether they
	// deleted it (no need to read it again: ids are never reused). An
	// instance the view does not hold is the provider's only if the
	// events created it for the provider (an instance never changes
	// provider): created lists those.
	dirty, dirtyInsts, created := map[string]bool{}, map[string]bool{}, map[string]bool{}
	err = archive.Scan(snap, o.at+1, to, func(_ uint64, _ uint32, data []byte) error {
		ev, err := events.DecodeEvent(data)
		if err != nil {
			return err
		}
		for _, k := range ev.Keys {
			switch k.Kind {
			case events.KindNodeRequest:
				dirty[k.Value] = dirty[k.Value] || ev.Type == "NodeRequestDeleted"
			case events.KindInstance:
				dirtyInsts[k.Value] = dirtyInsts[k.Value] || ev.Type == "InstanceDeleted"
			}
		}
		if ev.Type == "InstanceCreated" && ev.Key(events.KindProvider) == o.provider {
			created[ev.Key(events.KindInstance)] = true
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("launcher: read the archive %d..%d: %w", o.at+1, to, err)
	}
	n := 0
	for id, deleted := range dirty {
		if deleted {
			o.remove(id)
			continue
		}
		n++
		r, err := launcher.GetRequest(v, id)
		if errors.Is(err, projections.ErrNotFound) {
			o.remove(id)
			continue
		} else if err != nil {
			return 0, err
		}
		o.put(r)
	}
	for id, deleted := range dirtyInsts {
		if _, had := o.insts[id]; !had && !created[id] {
			continue // another provider's
		}
		if err := o.syncInstance(v, id, deleted); err != nil {
			return 0, err
		}
	}
	o.at = to
	return n, nil
}

// syncInstance brings the view's instance id to v.
func (o *openView) syncInstance(v projections.View, id string, deleted bool) error {
	var in *launcher.Instance
	if !deleted {
		var err error
		in, err = launcher.GetInstance(v, id)
		if err != nil && !errors.Is(err, projections.ErrNotFound) {
			return err
		}
	}
	if _, had := o.insts[id]; !had && (in == nil || in.Provider != o.provider) {
		return nil // not the provider's
	}
	o.sorted = nil
	if in == nil || in.Provider != o.provider {
		delete(o.insts, id)
		return nil
	}
	o.insts[id] = in
	return nil
}

// instances returns the provider's instances, by id.
func (o *openView) instances() []*launcher.Instance {
	if o.sorted == nil {
		o.sorted = make([]*launcher.Instance, 0, len(o.insts))
		for _, in := range o.insts {
			o.sorted = append(o.sorted, in)
		}
		slices.SortFunc(o.sorted, func(a, b *launcher.Instance) int { return cmp.Compare(a.ID, b.ID) })
	}
	return o.sorted
}

// load reads every open request and the provider's instances from the
// projection.
func (o *openView) load(v projections.View, at uint64) (int, error) {
	*o = *newOpenView(o.provider)
	insts, err := launcher.ProviderInstances(v, o.provider)
	if err != nil {
		return 0, err
	}
	for _, in := range insts {
		o.insts[in.ID] = in
	}
	o.sorted = insts
	n := 0
	for _, state := range []string{events.RequestRequested, events.RequestPending} {
		l := o.list(state)
		err := launcher.OpenRequests(v, state, func(r *launcher.Request) error {
			*l = append(*l, r)
			o.byID[r.ID] = r
			n++
			return nil
		})
		if err != nil {
			return 0, err
		}
		slices.SortFunc(*l, order) // the projection's order, made exact
	}
	o.at = at
	return n, nil
}

// setKey forgets the set-aside requests when what they wait on changed.
func (o *openView) setKey(provs []*launcher.Provider, quota string) {
	h := fnv.New64a()
	for _, p := range provs {
		h.Write([]byte(p.Config.Name))
		h.Write([]byte(strconv.FormatUint(p.ModifyIndex, 10)))
		h.Write([]byte{0})
	}
	k := waitKey{providers: h.Sum64(), quota: quota}
	if k != o.key {
		clear(o.waiting)
		o.key = k
	}
}

// setAside records that req waits on the providers or the quota.
func (o *openView) setAside(req *launcher.Request) { o.waiting[req.ID] = req.ModifyIndex }

// asideStill reports whether req is set aside and unchanged since.
func (o *openView) asideStill(req *launcher.Request) bool {
	m, ok := o.waiting[req.ID]
	return ok && m == req.ModifyIndex
}

// setCheckKey forgets the checked requests when what the check read
// changed: the quota or the provider's errored labels (the rest of its
// configuration is the generation's).
func (o *openView) setCheckKey(quota string, errored map[string]string) {
	k := quota
	for _, l := range slices.Sorted(maps.Keys(errored)) {
		k += "\x00" + l
	}
	if k != o.checkKey {
		clear(o.checked)
		o.checkKey = k
	}
}

// markChecked records that req has nothing to decline.
func (o *openView) markChecked(req *launcher.Request) { o.checked[req.ID] = req.ModifyIndex }

// checkedStill reports whether req was checked and is unchanged since.
func (o *openView) checkedStill(req *launcher.Request) bool {
	m, ok := o.checked[req.ID]
	return ok && m == req.ModifyIndex
}

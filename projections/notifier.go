package projections

import "sync"

// Notifier wakes readers when an entry is applied or a table changes.
type Notifier struct {
	mu struct {
		sync.Mutex
		applied   uint64
		appliedCh chan struct{}
		tables    map[string]chan struct{}
	}
}

// NewNotifier returns a Notifier at applied index 0.
func NewNotifier() *Notifier {
	n := &Notifier{}
	n.mu.appliedCh = make(chan struct{})
	n.mu.tables = map[string]chan struct{}{}
	return n
}

// Applied returns the last applied index and a channel closed when a later
// entry is applied.
func (n *Notifier) Applied() (uint64, <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.applied, n.mu.appliedCh
}

// Table returns a channel closed the next time table changes.
func (n *Notifier) Table(table string) <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	ch, ok := n.mu.tables[table]
	if !ok {
		ch = make(chan struct{})
		n.mu.tables[table] = ch
	}
	return ch
}

// Publish records index as applied and wakes the watchers of tables
// (table names and KeyTopic names); a nil tables slice with all set wakes
// every table watcher (after a restore). The FSM calls it after each batch
// it applies.
func (n *Notifier) Publish(index uint64, tables []string, all bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.mu.applied = index
	close(n.mu.appliedCh)
	n.mu.appliedCh = make(chan struct{})
	if all {
		for t, ch := range n.mu.tables {
			close(ch)
			delete(n.mu.tables, t)
		}
		return
	}
	for _, t := range tables {
		if ch, ok := n.mu.tables[t]; ok {
			close(ch)
			delete(n.mu.tables, t)
		}
	}
}

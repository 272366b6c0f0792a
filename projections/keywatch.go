package projections

// keyWatched are the tables whose changed keys the FSM publishes, so a
// reader can wait for one key instead of the whole table (a client's
// long-poll for its own node's allocations). Written only by WatchKeys at
// init, read-only afterwards.
var keyWatched = map[string]bool{}

// WatchKeys declares that readers may wait on single keys of table: every
// applied batch then wakes the Notifier topic KeyTopic(table, key) of each
// key it wrote or deleted. Call it only from a projection package's init.
func WatchKeys(table string) { keyWatched[table] = true }

// KeyTopic names the Notifier topic of one key of a key-watched table; it
// is passed to Notifier.Table like a table name.
func KeyTopic(table, key string) string { return table + "\x00" + key }

// Package versions keeps every version of a store's rows, so that the rows
// as they stood at any index are read directly: each key written by the
// entry at index i is stored again under the key and i, newest first, and
// a read at i seeks each key's newest version at or below i. It is fed the
// batches the FSM commits (Append), each write attributed to the entry
// that made it, and started, or started again after a gap, from a
// snapshot of the source (Seed), which writes only what differs.
//
// Spans say which indexes the store answers: a seed begins one, appends
// extend it, and a gap (a batch lost, the state replaced outside the FSM's
// apply) ends it. Each span is tagged with what wrote its rows (the
// projection versions), and a read is served only by a span of the
// reader's tag.
package versions

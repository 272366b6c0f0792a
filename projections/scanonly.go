package projections

// scanOnly are the tables whose rows are read only by scans (indexes a
// projection adds to: the history's, an allocation's by node, job and
// eval), whose table files need no Bloom filter: a filter answers point
// reads of absent keys, which these tables never get, and building one
// for every key of a rebuild's largest tables cost 2–3% of its CPU.
var scanOnly = map[string]bool{}

// ScanOnly declares that table's rows are read only by scans (a point
// read still works, without a filter's help). Call it only from a
// projection package's init.
func ScanOnly(table string) { scanOnly[table] = true }

// IsScanOnly reports whether table was declared ScanOnly: a rebuild's
// table files build it no Bloom filter.
func IsScanOnly(table string) bool { return scanOnly[table] }

// Package fingerprint finds out what a client node is: its CPU (cores and
// total MHz, from /proc/cpuinfo), memory (/proc/meminfo), the free disk of
// the client's data directory, its operating system, architecture, kernel
// version and hostname, and which task drivers work on it. The result is
// what the client registers: node attributes (Nomad's names:
// cpu.numcores, cpu.totalcompute, memory.totalbytes, kernel.name,
// kernel.version, unique.hostname, driver.<name>, …), resources and
// driver infos.
//
// # Usage
//
//	fp, err := fingerprint.Run(fingerprint.Config{DataDir: dir, Drivers: drivers})
//	node.Attributes, node.Resources, node.Drivers = fp.Attributes, fp.Resources, fp.Drivers
//
// The parsers (ParseCPUInfo, ParseMemInfo, ParseOSRelease) are pure
// functions of the file's text, tested against samples in testdata.
//
// # Concurrency
//
// Run and the parsers are safe for concurrent use; they keep no state.
//
// # Invariants
//
//   - A node always has CPU: when /proc/cpuinfo names no MHz (many ARM
//     machines), each core counts 1000 MHz.
//   - A file that cannot be read fails Run with the file's name; optional
//     sources (/etc/os-release) only leave their attributes out.
package fingerprint

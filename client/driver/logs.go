package driver

import "fmt"

// RotatedPath returns the name of the n-th rotated file of the log file
// path (TaskConfig.StdoutPath, StderrPath): path.1 is the newest,
// path.<LogMaxFiles-1> the oldest; n = 0 is path itself, the file being
// written. Every driver rotates its logs under these names, which the
// client's log API reads.
func RotatedPath(path string, n int) string {
	if n == 0 {
		return path
	}
	return fmt.Sprintf("%s.%d", path, n)
}

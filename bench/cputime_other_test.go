//go:build !unix

package bench

import "time"

// cpuTime is not measured on this platform; the cpu-ns metrics read 0.
func cpuTime() time.Duration { return 0 }

//go:build unix

package lang

import "syscall"

// nonBlocking makes the open of a file that turned out to be a named pipe
// return at once instead of waiting for a writer.
const nonBlocking = syscall.O_NONBLOCK

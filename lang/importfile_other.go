//go:build !unix

package lang

// nonBlocking is 0 where named pipes do not block an open.
const nonBlocking = 0

// Package sdktest finds what the tests that drive weft with the pinned
// LangGraph JS client (@langchain/langgraph-sdk, installed by `npm ci` in
// test/langgraph-sdk) need, and skips a test, saying why, when it is
// missing.
package sdktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Node returns the node binary, or skips t when node is not on PATH or
// the client is not installed in dir (the test/langgraph-sdk folder,
// relative to the test's package).
func Node(t testing.TB, dir string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("skipped: node is not on PATH; the LangGraph SDK tests need Node.js 20 or newer and `npm ci` in test/langgraph-sdk")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@langchain", "langgraph-sdk", "package.json")); err != nil {
		t.Skip("skipped: test/langgraph-sdk/node_modules is missing; run `npm ci` in test/langgraph-sdk to run the LangGraph SDK tests")
	}
	return node
}

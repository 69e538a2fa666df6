// Package mcptest finds the reference MCP servers the tests run (installed
// by `npm ci` in test/mcp), and skips a test, saying why, where node or
// the servers are missing.
package mcptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ServerJS returns the path of file in the dist folder of the reference
// server pkg ("server-everything", "index.js"), found in test/mcp of the
// module the test runs in; it skips t without node or the package.
func ServerJS(t testing.TB, pkg, file string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the tests against the reference MCP servers skip")
	}
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "test", "mcp", "node_modules", "@modelcontextprotocol", pkg, "dist", file)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s is not installed (run npm ci in test/mcp): %v", pkg, err)
	}
	return p
}

// moduleRoot is the nearest folder above the working directory (a test's
// package folder) that holds a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", os.ErrNotExist
		}
		dir = up
	}
}

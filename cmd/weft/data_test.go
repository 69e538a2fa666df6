package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftlang/weft/internal/datadir"
)

// serveFiles serves body by URL path and counts the requests.
func serveFiles(t *testing.T, files map[string][]byte) (url string, hits func() int) {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		b, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { return n }
}

// noData is an environment with WEFT_DATA unset and an empty per-user
// cache, run from outside the module (no ../shared/data).
func noData(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("WEFT_DATA", "")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Chdir(t.TempDir())
}

// A download whose bytes are not the pinned ones fails loudly (exit 1,
// "checksum mismatch", both sums) and leaves no file in the data directory.
func TestDataFetchRefusesAMismatch(t *testing.T) {
	noData(t)
	tatqa, _ := datadir.Lookup(datadir.Datasets(), "tatqa")
	base, hits := serveFiles(t, map[string][]byte{tatqa.Files[0].URL: []byte(`[{"table": {"uid": "tampered"}}]`)})
	dir := filepath.Join(t.TempDir(), "data")
	r := weft(t, []string{"data", "fetch", "tatqa", "--data", dir, "--base-url", base})
	r.wantCode(t, exitFailed)
	for _, want := range []string{"data fetch tatqa", "tatqa/tatqa_dataset_dev.json", "checksum mismatch", tatqa.Files[0].SHA256, "not written"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q: %s", want, r.stderr)
		}
	}
	if hits() != 1 {
		t.Errorf("%d requests", hits())
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 0 {
		t.Errorf("a refused download left %v", files)
	}
	r = weft(t, []string{"data", "fetch", "tatqa2", "--data", dir})
	r.wantCode(t, exitUsage)
	if !strings.Contains(r.stderr, `no dataset "tatqa2" (have: tatqa, chinook, spider, or all)`) {
		t.Errorf("stderr = %q", r.stderr)
	}
}

// Without --data and $WEFT_DATA, fetch writes to the per-user directory,
// which the commands then read: the layout fetch makes is the one the
// defaults expect. The real files are served from the project's copies
// (skipped without them).
func TestDataFetchThenCommandsFindIt(t *testing.T) {
	files := map[string][]byte{}
	for _, name := range []string{"tatqa", "chinook"} {
		d, _ := datadir.Lookup(datadir.Datasets(), name)
		for _, f := range d.Files {
			b, err := os.ReadFile(datadir.Require(t, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			files[f.URL] = b
		}
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	noData(t)
	base, _ := serveFiles(t, files)
	r := weft(t, []string{"data", "fetch", "tatqa", "chinook", "--base-url", base})
	r.wantCode(t, 0)
	cache := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "weft", "data")
	want := "tatqa: 1 file fetched, 0 already present, all verified, in " + cache + "\nchinook: 2 files fetched, 0 already present, all verified, in " + cache + "\n"
	if r.stdout != want {
		t.Errorf("stdout = %q\nwant %q", r.stdout, want)
	}
	r = weft(t, []string{"data", "status"})
	r.wantCode(t, 0)
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		rows = append(rows, strings.Join(strings.Fields(line), " "))
	}
	for _, want := range []string{"tatqa verified " + cache, "chinook verified " + cache, "spider missing: weft data fetch spider"} {
		if !slices.Contains(rows, want) {
			t.Errorf("status does not show %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	// eval recall's default, and a relative --docs and index path, find
	// the fetched TAT-QA.
	r = weftProcess(t, []string{"eval", "recall", "-k", "10"})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "over 1668 questions, 278 contexts") {
		t.Errorf("eval recall: %q", r.stdout)
	}
	r = weftProcess(t, []string{"run", filepath.Join(repo, "examples", "intentqa", "app.wf"), "--docs", datadir.TATQADev,
		"--llm", "replay:" + filepath.Join(repo, "examples", "intentqa", "sessions", "qa.jsonl"),
		"--input", "What is the amount of total sales in 2019?"})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "$1,496.5 million") {
		t.Errorf("run --docs %s: %q %q", datadir.TATQADev, r.stdout, r.stderr)
	}
	r = weftProcess(t, []string{"index", datadir.TATQADev, "-o", "tatqa.db"})
	r.wantCode(t, 0)
	if !strings.Contains(r.stdout, "278 documents") {
		t.Errorf("index: %q", r.stdout)
	}
	// Fetching again downloads nothing.
	r = weft(t, []string{"data", "fetch", "all", "--base-url", "http://127.0.0.1:1"})
	r.wantCode(t, exitFailed) // spider is not served
	if !strings.HasPrefix(r.stdout, "tatqa: 0 files fetched, 1 already present") || !strings.Contains(r.stdout, "chinook: 0 files fetched, 2 already present") {
		t.Errorf("second fetch: %q", r.stdout)
	}
}

// eval spider reads the questions where `weft data fetch spider` puts them
// (spider-chinook/queries, N.sql files), else the JSON list the project's
// machines keep; with neither, it says how to fetch them.
func TestSpiderQuestionsLayout(t *testing.T) {
	noData(t)
	dir := t.TempDir()
	_, err := spiderQuestions(env{}, dir)
	if err == nil || !strings.Contains(err.Error(), "weft data fetch") {
		t.Fatalf("err = %v; want advice to fetch", err)
	}
	json := filepath.Join(dir, filepath.FromSlash(datadir.SpiderGoldJSON))
	os.MkdirAll(filepath.Dir(json), 0o755)
	os.WriteFile(json, []byte("[]"), 0o644)
	if p, err := spiderQuestions(env{}, dir); err != nil || p != json {
		t.Errorf("spiderQuestions = %q, %v; want the JSON list", p, err)
	}
	queries := filepath.Join(dir, filepath.FromSlash(datadir.SpiderQueries))
	os.MkdirAll(queries, 0o755)
	if p, err := spiderQuestions(env{}, dir); err != nil || p != queries {
		t.Errorf("spiderQuestions = %q, %v; want the fetched directory", p, err)
	}
	// The same through $WEFT_DATA.
	getenv := func(k string) string { return map[string]string{datadir.Env: dir}[k] }
	if p, err := spiderQuestions(env{getenv: getenv}, ""); err != nil || p != queries {
		t.Errorf("spiderQuestions($WEFT_DATA) = %q, %v", p, err)
	}
}

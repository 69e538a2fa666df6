package datadir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// fakeSource serves files by URL path and counts the requests.
type fakeSource struct {
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
}

func (s *fakeSource) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits[r.URL.Path]++
	b, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Write(b)
}

func serve(t *testing.T, files map[string][]byte) (*fakeSource, string) {
	t.Helper()
	src := &fakeSource{files: files, hits: map[string]int{}}
	srv := httptest.NewServer(src)
	t.Cleanup(srv.Close)
	return src, srv.URL
}

func pin(path, url string, b []byte) File {
	sum := sha256.Sum256(b)
	return File{Path: path, URL: url, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}
}

// leftovers lists the files under dir, relative, with slashes.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestFetchVerifiesAndSkipsWhatIsPresent(t *testing.T) {
	a, b := []byte("the first file\n"), []byte("-- question: q\nSELECT 1\n")
	src, base := serve(t, map[string][]byte{"/r/c1/a.json": a, "/r/c1/q/0.sql": b})
	ds := Dataset{Name: "fake", Files: []File{pin("fake/a.json", "/r/c1/a.json", a), pin("fake/queries/0.sql", "/r/c1/q/0.sql", b)}}
	dir := filepath.Join(t.TempDir(), "data") // created by Fetch
	var log []string
	fc := &Fetcher{Dir: dir, BaseURL: base, Progress: func(f File, what string) { log = append(log, f.Path+" "+what) }}
	if err := fc.Fetch(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string][]byte{"fake/a.json": a, "fake/queries/0.sql": b} {
		got, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil || string(got) != string(want) {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
		if st, err := Check(dir, ds.Files[0]); st != Verified || err != nil {
			t.Errorf("Check = %v, %v", st, err)
		}
	}
	if err := fc.Fetch(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	want := "fake/a.json fetched|fake/queries/0.sql fetched|fake/a.json present|fake/queries/0.sql present"
	if got := strings.Join(log, "|"); got != want {
		t.Errorf("progress = %s\nwant %s", got, want)
	}
	if src.hits["/r/c1/a.json"] != 1 || src.hits["/r/c1/q/0.sql"] != 1 {
		t.Errorf("requests = %v; a file already verified was fetched again", src.hits)
	}
	if got := leftovers(t, dir); strings.Join(got, " ") != "fake/a.json fake/queries/0.sql" {
		t.Errorf("data directory holds %v", got)
	}
}

// A file whose bytes are not the pinned ones is refused with a
// *ChecksumError naming both sums; nothing of it is written, a good copy
// already in place stays, and no temporary file is left.
func TestFetchRefusesAMismatch(t *testing.T) {
	good := []byte("pinned content\n")
	for _, c := range []struct {
		name   string
		served []byte
		got    string // in the message
	}{
		{"other bytes", []byte("pinned c0ntent\n"), "got sha256 "},
		{"shorter", []byte("pinned"), "got 6 bytes, want 15"},
		{"longer", []byte("pinned content\nand an appended payload"), "got more than 15 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			first := []byte("first\n")
			_, base := serve(t, map[string][]byte{"/f": first, "/x": c.served})
			ds := Dataset{Name: "fake", Files: []File{pin("d/first.txt", "/f", first), pin("d/x.txt", "/x", good)}}
			dir := t.TempDir()
			err := (&Fetcher{Dir: dir, BaseURL: base}).Fetch(context.Background(), ds)
			var ce *ChecksumError
			if !errors.Is(err, ErrChecksum) || !errors.As(err, &ce) || ce.Path != "d/x.txt" || ce.Want != ds.Files[1].SHA256 {
				t.Fatalf("err = %v; want a *ChecksumError for d/x.txt", err)
			}
			if !strings.Contains(err.Error(), c.got) || !strings.Contains(err.Error(), base+"/x") {
				t.Errorf("message %q does not say %q and the URL", err, c.got)
			}
			if got := leftovers(t, dir); strings.Join(got, " ") != "d/first.txt" {
				t.Errorf("after a mismatch the data directory holds %v; want only the verified d/first.txt", got)
			}
			// A corrupt copy in place is not replaced by a bad download
			// either, and is reported as corrupt.
			os.WriteFile(filepath.Join(dir, "d", "x.txt"), []byte("old"), 0o644)
			if err := (&Fetcher{Dir: dir, BaseURL: base}).Fetch(context.Background(), ds); !errors.Is(err, ErrChecksum) {
				t.Fatalf("err = %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "d", "x.txt")); string(b) != "old" {
				t.Errorf("the file in place became %q", b)
			}
			if st, _ := Check(dir, ds.Files[1]); st != Corrupt {
				t.Errorf("Check = %v, want corrupt", st)
			}
		})
	}
}

// A corrupt file in place is replaced by a verified download; a missing
// file on the server is an *HTTPError and leaves nothing.
func TestFetchReplacesCorruptAndReportsHTTP(t *testing.T) {
	good := []byte("good\n")
	_, base := serve(t, map[string][]byte{"/g": good})
	dir := t.TempDir()
	f := pin("g.txt", "/g", good)
	os.WriteFile(filepath.Join(dir, "g.txt"), []byte("bad\n"), 0o644)
	if err := (&Fetcher{Dir: dir, BaseURL: base}).Fetch(context.Background(), Dataset{Files: []File{f}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "g.txt")); string(b) != "good\n" {
		t.Errorf("g.txt = %q", b)
	}
	err := (&Fetcher{Dir: dir, BaseURL: base}).Fetch(context.Background(), Dataset{Files: []File{pin("h.txt", "/missing", good)}})
	var he *HTTPError
	if !errors.As(err, &he) || !strings.Contains(he.Status, "404") {
		t.Fatalf("err = %v; want an *HTTPError 404", err)
	}
	if got := leftovers(t, dir); strings.Join(got, " ") != "g.txt" {
		t.Errorf("data directory holds %v", got)
	}
}

// The pinned catalogue: every file has a SHA-256, a size, a path in the
// layout the commands expect, and a pinned source.
func TestDatasetsCatalogue(t *testing.T) {
	hexSum := regexp.MustCompile(`^[0-9a-f]{64}$`)
	commit := regexp.MustCompile(`/[0-9a-f]{40}/`)
	paths := map[string]bool{}
	n := map[string]int{}
	for _, d := range Datasets() {
		for _, f := range d.Files {
			if !hexSum.MatchString(f.SHA256) || f.Size <= 0 || !commit.MatchString(f.URL) || paths[f.Path] {
				t.Errorf("%s: bad entry %+v", d.Name, f)
			}
			paths[f.Path] = true
			n[d.Name]++
		}
	}
	for _, p := range []string{TATQADev, ChinookSQLite, ChinookPostgreSQL, SpiderQueries + "/0.sql", SpiderQueries + "/83.sql"} {
		if !paths[p] {
			t.Errorf("no dataset fetches %s", p)
		}
	}
	if n["tatqa"] != 1 || n["chinook"] != 2 || n["spider"] != 84 {
		t.Errorf("files per dataset = %v", n)
	}
	if _, ok := Lookup(Datasets(), "TATQA"); !ok {
		t.Error("Lookup is not case-insensitive")
	}
}

// The pinned checksums are those of the real files: served from the
// copies the project's machines keep, the real catalogue fetches and
// verifies (skipped without the data).
func TestDatasetsMatchTheRealFiles(t *testing.T) {
	files := map[string][]byte{}
	var ds []Dataset
	for _, d := range Datasets() {
		if d.Name == "spider" {
			continue // the machines keep it as one JSON file
		}
		for _, f := range d.Files {
			b, err := os.ReadFile(Require(t, f.Path))
			if err != nil {
				t.Fatal(err)
			}
			files[f.URL] = b
		}
		ds = append(ds, d)
	}
	_, base := serve(t, files)
	dir := t.TempDir()
	for _, d := range ds {
		if err := (&Fetcher{Dir: dir, BaseURL: base}).Fetch(context.Background(), d); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
	}
}

func TestDefaultDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", t.TempDir())
	d, err := DefaultDir()
	if err != nil || d != filepath.Join(cache, "weft", "data") {
		t.Fatalf("DefaultDir = %q, %v", d, err)
	}
	if got, _ := Dir(func(string) string { return "" }); got != d {
		t.Errorf("Dir without WEFT_DATA = %q, want %q", got, d)
	}
	if got, _ := Dir(func(k string) string { return map[string]string{Env: "/x"}[k] }); got != "/x" {
		t.Errorf("Dir with WEFT_DATA = %q", got)
	}
	// Find falls back to it, outside any module.
	os.MkdirAll(filepath.Join(d, "tatqa"), 0o755)
	t.Chdir(t.TempDir())
	got, err := FindWith(func(string) string { return "" }, "tatqa")
	if err != nil || got != filepath.Join(d, "tatqa") {
		t.Errorf("FindWith = %q, %v", got, err)
	}
}

package datadir

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// DefaultBaseURL is where the datasets' files are fetched from unless a
// Fetcher names a mirror: File.URL is a path on it.
const DefaultBaseURL = "https://raw.githubusercontent.com"

// Dataset is a public dataset weft's examples use: files fetched from a
// pinned commit and verified by checksum.
type Dataset struct {
	// Name is what `weft data fetch` is given: "tatqa", "chinook", "spider".
	Name string
	// Description says what the files hold.
	Description string
	// License is the dataset's license.
	License string
	// Source names the repository and the commit the files come from.
	Source string
	// Files are the dataset's files.
	Files []File
}

// File is one file of a dataset.
type File struct {
	// Path is where the file goes under the data directory, with slashes.
	Path string
	// URL is the file's path on the base URL (DefaultBaseURL).
	URL string
	// Size is the file's length in bytes.
	Size int64
	// SHA256 is the hex SHA-256 of the file's bytes.
	SHA256 string
}

// Lookup returns the dataset called name among ds.
func Lookup(ds []Dataset, name string) (Dataset, bool) {
	for _, d := range ds {
		if strings.EqualFold(d.Name, name) {
			return d, true
		}
	}
	return Dataset{}, false
}

// ErrChecksum is the sentinel of a file whose bytes are not the ones
// pinned: errors.Is finds it in a *ChecksumError.
var ErrChecksum = errors.New("checksum mismatch")

// ChecksumError reports a file whose size or SHA-256 is not the pinned
// one. Nothing of it is left in the data directory.
type ChecksumError struct {
	// Path is the file's path under the data directory; URL where it came
	// from.
	Path, URL string
	// Want and Got are the SHA-256 sums pinned and computed (Got is empty
	// when the size was already wrong).
	Want, Got string
	// WantSize and GotSize are the lengths pinned and received (GotSize
	// counts at most WantSize+1 bytes: reading stops there).
	WantSize, GotSize int64
}

// Error names the file, its source and both sums.
func (e *ChecksumError) Error() string {
	if e.Got == "" && e.GotSize > e.WantSize {
		return fmt.Sprintf("%s from %s: %v: got more than %d bytes, want %d with sha256 %s", e.Path, e.URL, ErrChecksum, e.WantSize, e.WantSize, e.Want)
	}
	if e.Got == "" {
		return fmt.Sprintf("%s from %s: %v: got %d bytes, want %d with sha256 %s", e.Path, e.URL, ErrChecksum, e.GotSize, e.WantSize, e.Want)
	}
	return fmt.Sprintf("%s from %s: %v: got sha256 %s (%d bytes), want %s (%d bytes)", e.Path, e.URL, ErrChecksum, e.Got, e.GotSize, e.Want, e.WantSize)
}

// Is makes errors.Is(err, ErrChecksum) true.
func (e *ChecksumError) Is(target error) bool { return target == ErrChecksum }

// HTTPError reports a download answered with a status other than 200.
type HTTPError struct {
	URL    string
	Status string
}

// Error names the URL and the status.
func (e *HTTPError) Error() string { return fmt.Sprintf("GET %s: %s", e.URL, e.Status) }

// State is what a data directory holds of one file.
type State int

const (
	// Missing: there is no file at the path.
	Missing State = iota
	// Verified: the file has the pinned size and checksum.
	Verified
	// Corrupt: a file is there with another size or checksum.
	Corrupt
)

// String returns "missing", "verified" or "corrupt".
func (s State) String() string {
	switch s {
	case Verified:
		return "verified"
	case Corrupt:
		return "corrupt"
	}
	return "missing"
}

// Check returns what dir holds of f.
func Check(dir string, f File) (State, error) {
	p := filepath.Join(dir, filepath.FromSlash(f.Path))
	fh, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Missing, nil
	}
	if err != nil {
		return Missing, fmt.Errorf("datadir: %w", err)
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, fh)
	if err != nil {
		return Missing, fmt.Errorf("datadir: %s: %w", p, err)
	}
	if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
		return Corrupt, nil
	}
	return Verified, nil
}

// Fetcher downloads datasets into a data directory.
type Fetcher struct {
	// Dir is the data directory; it is created when missing.
	Dir string
	// BaseURL is the host the files' URLs are paths on; empty means
	// DefaultBaseURL. A mirror keeps the same paths.
	BaseURL string
	// Client sends the requests; nil means http.DefaultClient.
	Client *http.Client
	// Progress, when not nil, is told of each file: "fetched", or
	// "present" when the file was already there and verified.
	Progress func(f File, what string)
}

// Fetch downloads the files of d that are not already in the data
// directory with their pinned checksum. Each file is written to a
// temporary file beside its place, checked, and renamed into place only
// when its size and SHA-256 are the pinned ones: a failure (the network, a
// mismatch, a cancelled ctx) leaves no partial file, and a file already
// present is never replaced by a bad one. A mismatch is a *ChecksumError.
// Fetch stops at the first failure; the files fetched before it stay,
// each whole and verified.
func (fc *Fetcher) Fetch(ctx context.Context, d Dataset) error {
	if fc.Dir == "" {
		return errors.New("datadir: Fetcher.Dir is empty")
	}
	for _, f := range d.Files {
		st, err := Check(fc.Dir, f)
		if err != nil {
			return err
		}
		if st == Verified {
			if fc.Progress != nil {
				fc.Progress(f, "present")
			}
			continue
		}
		if err := fc.fetchFile(ctx, f); err != nil {
			return err
		}
		if fc.Progress != nil {
			fc.Progress(f, "fetched")
		}
	}
	return nil
}

func (fc *Fetcher) fetchFile(ctx context.Context, f File) (err error) {
	base := strings.TrimSuffix(fc.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	url := base + f.URL
	dst := filepath.Join(fc.Dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("datadir: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("datadir: %w", err)
	}
	client := fc.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("datadir: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("datadir: %w", &HTTPError{URL: url, Status: resp.Status})
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return fmt.Errorf("datadir: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	// One byte more than pinned is enough to know the file is wrong.
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, f.Size+1))
	if err != nil {
		return fmt.Errorf("datadir: %s: %w", url, err)
	}
	if n != f.Size {
		return fmt.Errorf("datadir: %w", &ChecksumError{Path: f.Path, URL: url, Want: f.SHA256, WantSize: f.Size, GotSize: n})
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return fmt.Errorf("datadir: %w", &ChecksumError{Path: f.Path, URL: url, Want: f.SHA256, Got: got, WantSize: f.Size, GotSize: n})
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("datadir: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("datadir: %w", err)
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("datadir: %w", err)
	}
	return nil
}

// Package datadir finds and fetches the public datasets weft's examples and
// tests use (Chinook, Spider questions for Chinook, TAT-QA).
//
// The data directory is the one named by the WEFT_DATA environment
// variable; without it, a "shared/data" directory beside the module's root
// (../shared/data from a checkout, as the project's machines have it), else
// the per-user default, DefaultDir (~/.cache/weft/data on Linux), where
// `weft data fetch` puts the files when WEFT_DATA is not set. Datasets and
// Fetcher download the files from pinned commits, checksum-verified, in the
// layout Find expects (TATQADev, ChinookSQLite, SpiderQueries...).
//
// Tests call Require, which skips the test with a message saying how to get
// the data when it is absent; commands call Find and report its error.
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Env is the environment variable naming the data directory.
const Env = "WEFT_DATA"

// Fetch is the advice given when the data is missing.
const Fetch = "get it with `weft data fetch tatqa|chinook|spider|all` (into $WEFT_DATA, else " + defaultDirHint + "; see examples/README.md)"

// defaultDirHint names DefaultDir in messages.
const defaultDirHint = "~/.cache/weft/data"

// DefaultDir returns the per-user data directory used when WEFT_DATA is
// not set: "weft/data" in the user's cache directory (os.UserCacheDir:
// $XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS,
// %LocalAppData% on Windows).
func DefaultDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("datadir: no per-user directory (set %s): %w", Env, err)
	}
	return filepath.Join(d, "weft", "data"), nil
}

// Dir returns the data directory `weft data fetch` writes to: $WEFT_DATA
// as getenv reads it (nil: os.Getenv), else DefaultDir.
func Dir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv(Env); d != "" {
		return d, nil
	}
	return DefaultDir()
}

// NotFoundError reports a dataset that is in none of the places looked at.
type NotFoundError struct {
	// Sub is the path asked for, relative to the data directory.
	Sub string
	// Looked lists the paths tried, in order.
	Looked []string
}

// Error names the dataset, the places tried and how to get it.
func (e *NotFoundError) Error() string {
	return fmt.Sprintf("data %q not found (looked in %v); %s", e.Sub, e.Looked, Fetch)
}

// Find returns the path of sub (e.g. "tatqa/tatqa_dataset_dev.json")
// under the data directory: $WEFT_DATA when set, else shared/data beside
// the root of the Go module holding the working directory, else
// DefaultDir. The path must exist; otherwise the error is a
// *NotFoundError.
func Find(sub string) (string, error) { return FindWith(os.Getenv, sub) }

// FindWith is Find reading the environment with getenv (nil: os.Getenv).
func FindWith(getenv func(string) string, sub string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var looked []string
	if d := getenv(Env); d != "" {
		p := filepath.Join(d, sub)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		return "", &NotFoundError{Sub: sub, Looked: []string{p}}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("datadir: %w", err)
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			p := filepath.Join(dir, "..", "shared", "data", sub)
			looked = append(looked, p)
			if _, err := os.Stat(p); err == nil {
				return filepath.Clean(p), nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if d, err := DefaultDir(); err == nil {
		p := filepath.Join(d, sub)
		looked = append(looked, p)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", &NotFoundError{Sub: sub, Looked: looked}
}

// Require returns the path of sub as Find does, and skips tb with a
// message saying how to get the data when it is absent.
func Require(tb testing.TB, sub string) string {
	tb.Helper()
	p, err := Find(sub)
	if err != nil {
		var nf *NotFoundError
		if errors.As(err, &nf) {
			tb.Skipf("skipping: %v", err)
		}
		tb.Fatal(err)
	}
	return p
}

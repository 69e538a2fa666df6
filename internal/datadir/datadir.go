// Package datadir finds the public datasets weft's examples and tests use
// (Chinook, Spider questions for Chinook, TAT-QA): the directory named by
// the WEFT_DATA environment variable, else a "shared/data" directory beside
// the module's root (../shared/data from a checkout), as the project's
// machines have it.
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
const Fetch = "set WEFT_DATA to a directory holding chinook/, spider-chinook/ and tatqa/ (see examples/README.md for the download commands)"

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
// the root of the Go module holding the working directory. The path must
// exist; otherwise the error is a *NotFoundError.
func Find(sub string) (string, error) {
	var looked []string
	if d := os.Getenv(Env); d != "" {
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

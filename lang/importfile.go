package lang

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// MaxImportSize is the largest file an import reads: 4 MiB, far more than
// any workflow needs, and little enough that an import of something else
// cannot exhaust memory.
const MaxImportSize = 4 << 20

// ErrImportRefused is the kind of the errors of ReadImport and of the
// readers ImportReader returns for a file that is not imported because of
// what it is or where it is (errors.Is finds it): a special file, one too
// large, or one outside the directory imports are confined to.
var ErrImportRefused = errors.New("import refused")

// refused is an error of kind ErrImportRefused.
type refused struct{ msg string }

func (e *refused) Error() string { return e.msg }
func (e *refused) Unwrap() error { return ErrImportRefused }

// ReadImport reads the file name for an import: it must be a regular file
// (not a directory, device, named pipe or socket, which are refused from
// their mode before they are opened, so that a FIFO cannot block and
// /dev/zero cannot exhaust memory) of at most MaxImportSize bytes.
func ReadImport(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the file have become a FIFO since the Stat, the
	// open does not wait for a writer; the mode of what was opened is
	// checked again.
	f, err := os.OpenFile(name, os.O_RDONLY|nonBlocking, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(ofi); err != nil {
		return nil, err
	}
	if ofi.Size() > MaxImportSize {
		return nil, tooLarge()
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxImportSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxImportSize {
		return nil, tooLarge()
	}
	return b, nil
}

func tooLarge() error {
	return &refused{fmt.Sprintf("larger than %d MiB, the most an import reads", MaxImportSize>>20)}
}

// regular returns an error unless fi describes a regular file.
func regular(fi fs.FileInfo) error {
	m := fi.Mode()
	if m.IsRegular() {
		return nil
	}
	what := "a special file"
	switch {
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		what = "a device"
	}
	return &refused{"not a regular file (" + what + ")"}
}

// ImportReader returns the reader Load uses for imports of a root file in
// dir: ReadImport, for files that are inside dir once every symbolic link
// is resolved. A link that leads out of dir is refused. dir is resolved
// once, at the first import, not once per import.
func ImportReader(dir string) ReadFileFunc {
	resolved := sync.OnceValues(func() (string, error) {
		root, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return "", err
		}
		return filepath.Abs(root)
	})
	return func(name string) ([]byte, error) {
		root, err := resolved()
		if err != nil {
			return nil, err
		}
		real, err := filepath.EvalSymlinks(name)
		if err != nil {
			return nil, err
		}
		if real, err = filepath.Abs(real); err != nil {
			return nil, err
		}
		if !within(root, real) {
			return nil, &refused{"the file is outside the directory of the root file (through a symbolic link)"}
		}
		return ReadImport(real)
	}
}

// within reports whether path is dir or inside it; both are clean.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// checkImportPath returns why the import of p (as written) by a file in
// the module whose root file is in rootDir, resolved to name, is refused,
// or "". It looks at the path only; the reader checks the file.
func checkImportPath(p, name, rootDir string) string {
	switch {
	case !strings.HasSuffix(p, ".wf"):
		return "only .wf files can be imported"
	case filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return "an absolute path cannot be imported; an import is relative to the importing file"
	case !within(filepath.Clean(rootDir), filepath.Clean(name)):
		return "the path leaves the directory of the root file, " + rootDir + ", to which imports are confined"
	}
	return ""
}

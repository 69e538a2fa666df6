package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/weftlang/weft/action"
	"github.com/weftlang/weft/engine"
	"github.com/weftlang/weft/flow"
	"github.com/weftlang/weft/lang"
	"github.com/weftlang/weft/owf"
)

// Format is a workflow's front-end: the language its source is written in.
type Format string

const (
	// FormatWF is weft's own language (.wf files, docs/language.md).
	FormatWF Format = "wf"
	// FormatOWF is an ollama-workflows JSON document (.json files).
	FormatOWF Format = "owf"
	// FormatGo is a workflow built in Go (the graph package), opened
	// with Go; it has no source to keep.
	FormatGo Format = "go"
)

// Source says where a workflow comes from. Make one with File, Bytes,
// FS, Stored or Go; the zero Source opens nothing.
type Source struct {
	// Name is the root file's name: diagnostics name it, its extension
	// picks the front-end (.json is ollama-workflows, anything else
	// .wf) unless Format says, and imports are read relative to it.
	Name string
	// Data is the root file's contents; nil reads Name from FS.
	Data []byte
	// FS holds the files a .wf root imports (and the root when Data is
	// nil). Nil reads them from the operating system, confined to the
	// root's directory as lang.ImportReader is; a Source of Bytes has
	// no imports.
	FS fs.FS
	// Workflow names the workflow to run in a module of several; ""
	// takes the module's main (first) workflow.
	Workflow string
	// Format overrides the front-end Name's extension picks.
	Format Format

	noImports bool
	stored    *bundle
	graph     *flow.Workflow
}

// File is the workflow in the file at path: a .wf file with the files it
// imports, or an ollama-workflows document (.json).
func File(path string) Source { return Source{Name: path} }

// Bytes is a workflow whose root file, called name, holds data. It may
// import nothing.
func Bytes(name string, data []byte) Source {
	return Source{Name: name, Data: data, noImports: true}
}

// FS is the workflow in the file name of fsys, with the files it imports
// read from fsys too.
func FS(fsys fs.FS, name string) Source { return Source{Name: name, FS: fsys} }

// Stored is a workflow's canonical source as Workflow.Source holds it and a
// store keeps it: opening it gives back the same plan and digest on any
// machine.
func Stored(canonical []byte) Source {
	return Source{Name: "(stored)", Data: canonical, stored: &bundle{}}
}

// Go is a workflow built in Go (with the graph package, or by hand),
// registered under name. It has no source to keep: a process that resumes
// a thread of it must open the same workflow under the same name.
func Go(name string, w *flow.Workflow) Source {
	return Source{Name: name, Format: FormatGo, graph: w}
}

// Workflow is a compiled workflow, ready to run: its plan, the source it
// came from in canonical form, and the digest that names that source.
type Workflow struct {
	// Name is the workflow's name in its module.
	Name string
	// Format is the front-end the source is written in.
	Format Format
	// Plan is what the engine runs; nil when Diagnostics has errors.
	Plan *flow.Plan
	// Module is the loaded source, for rendering diagnostics with their
	// source lines (lang.FormatDiagnostics with Module.Source).
	Module *lang.Module
	// Diagnostics are the front-end's and the compiler's findings, each
	// once, errors and warnings, in order.
	Diagnostics flow.Diagnostics
	// Source is the canonical source: the root file and every file it
	// imports, named relative to the root's directory, and the workflow
	// chosen, as one JSON document. Stored opens it again. Nil for a
	// workflow built in Go.
	Source []byte
	// Digest names Source: "sha256:" and the hex SHA-256 of Source; for
	// a workflow built in Go, "go:" and its name.
	Digest string
}

// OpenOptions adjust Open. The zero value (or nil) compiles with weft's
// standard expression functions and template reads and checks no action
// names.
type OpenOptions struct {
	// HasAction reports whether an action name can be carried out
	// (engine.Registry.Has of the actions a run will have); nil does not
	// check. Actions bound in the source always exist.
	HasAction func(name string) bool
	// Reducers adds named reducers to the built-in ones.
	Reducers map[string]flow.Reducer
}

// Open loads the workflow src names, with the files it imports, and
// compiles it with weft's standard options (the built-in expression
// functions, prompt templates' reads as implicit inputs, the pass action's
// typing).
//
// A workflow with errors comes back with its Diagnostics and Module (to
// render them) and an error that errors.As finds as *DiagnosticsError;
// warnings alone are no error. A source that cannot be read is an error
// that wraps the file system's (errors.Is finds fs.ErrNotExist).
func Open(ctx context.Context, src Source, opts *OpenOptions) (*Workflow, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &OpenOptions{}
	}
	if src.graph != nil {
		return openGo(src, opts)
	}
	if src.stored != nil {
		b, err := decodeBundle(src.Data)
		if err != nil {
			return nil, err
		}
		src = b.source()
	}
	if src.Name == "" {
		return nil, fmt.Errorf("service: open: %w", errNoName)
	}
	mod, format, ds, root, err := load(src)
	if err != nil {
		return nil, err
	}
	wf := &Workflow{Format: format, Module: mod, Diagnostics: ds}
	if wf.Diagnostics.HasErrors() {
		return wf, &DiagnosticsError{Name: src.Name, Diagnostics: wf.Diagnostics}
	}
	w, err := pick(mod, src.Name, src.Workflow)
	if err != nil {
		return wf, err
	}
	wf.Name = w.Name
	wf.Source, err = canonical(format, src.Name, root, src.Workflow, mod)
	if err != nil {
		return wf, err
	}
	sum := sha256.Sum256(wf.Source)
	wf.Digest = "sha256:" + hex.EncodeToString(sum[:])
	return compile(wf, w, opts)
}

// LoadModule loads the module src names (the root file and the files it
// imports) without compiling its workflows: what `weft validate` checks
// and tools that look at every workflow of a file need. The Module comes
// back with diagnostics, for rendering them, unless the source cannot be
// read at all (then the error says why).
func LoadModule(ctx context.Context, src Source) (*lang.Module, Format, flow.Diagnostics, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", nil, err
	}
	if src.graph != nil {
		return nil, FormatGo, nil, fmt.Errorf("service: load %s: a Go workflow has no module", src.Name)
	}
	if src.stored != nil {
		b, err := decodeBundle(src.Data)
		if err != nil {
			return nil, "", nil, err
		}
		src = b.source()
	}
	if src.Name == "" {
		return nil, "", nil, fmt.Errorf("service: load: %w", errNoName)
	}
	m, format, ds, _, err := load(src)
	return m, format, ds, err
}

// load loads src's module; it returns the directory imports are relative
// to as well.
func load(src Source) (*lang.Module, Format, flow.Diagnostics, string, error) {
	data, read, root, err := src.reader()
	if err != nil {
		return nil, "", nil, root, err
	}
	format := src.Format
	if format == "" {
		format = FormatWF
		if strings.EqualFold(path.Ext(filepath.ToSlash(src.Name)), ".json") {
			format = FormatOWF
		}
	}
	var (
		mod *lang.Module
		ds  flow.Diagnostics
	)
	switch format {
	case FormatWF:
		mod, ds = lang.LoadSource(src.Name, data, read)
	case FormatOWF:
		if mod, ds, err = loadOWF(src.Name, data); err != nil {
			return nil, format, nil, root, err
		}
	default:
		return nil, format, nil, root, fmt.Errorf("service: open %s: unknown format %q", src.Name, format)
	}
	return mod, format, dedupe(ds), root, nil
}

// openGo compiles a workflow built in Go.
func openGo(src Source, opts *OpenOptions) (*Workflow, error) {
	if src.Name == "" {
		return nil, fmt.Errorf("service: open a Go workflow: %w", errNoName)
	}
	name := src.graph.Name
	if name == "" {
		name = src.Name
	}
	wf := &Workflow{Name: name, Format: FormatGo, Digest: "go:" + src.Name}
	return compile(wf, src.graph, opts)
}

// compile compiles w with the standard options into wf.
func compile(wf *Workflow, w *flow.Workflow, opts *OpenOptions) (*Workflow, error) {
	plan, cds, err := Compile(w, opts)
	if err != nil {
		return wf, err
	}
	wf.Diagnostics = dedupe(append(wf.Diagnostics, cds...))
	if plan == nil || wf.Diagnostics.HasErrors() {
		return wf, &DiagnosticsError{Name: wf.Name, Diagnostics: wf.Diagnostics}
	}
	wf.Plan = plan
	return wf, nil
}

// Compile compiles one workflow of a loaded module with weft's standard
// options: the built-in expression functions, prompt templates' reads as
// implicit inputs, the pass action's typing, and opts (nil: no action
// check). It is the one place these options are put together; Open uses
// it. The plan is nil when the diagnostics have errors; the error is
// only for the built-in functions failing to load.
func Compile(w *flow.Workflow, opts *OpenOptions) (*flow.Plan, flow.Diagnostics, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	fns, err := action.Functions()
	if err != nil {
		return nil, nil, fmt.Errorf("service: the built-in functions: %w", err)
	}
	plan, ds := flow.Compile(w, &flow.CompileOptions{
		HasAction:         opts.HasAction,
		Reducers:          opts.Reducers,
		Functions:         fns,
		BindingReads:      action.TemplateReads,
		OutputsFromInputs: action.OutputsFromInputs,
	})
	return plan, ds, nil
}

// Fingerprint identifies the structure of the workflow's plan that a
// thread's records depend on (engine.Fingerprint); "" without a plan.
func (w *Workflow) Fingerprint() string {
	if w == nil || w.Plan == nil {
		return ""
	}
	return engine.Fingerprint(w.Plan)
}

// reader returns the root file's contents, the reader of its imports, and
// the directory imports are relative to.
func (src Source) reader() ([]byte, lang.ReadFileFunc, string, error) {
	root := filepath.Dir(src.Name)
	switch {
	case src.noImports:
		return src.Data, nil, root, nil
	case src.FS != nil:
		fsys := src.FS
		data := src.Data
		if data == nil {
			var err error
			if data, err = fs.ReadFile(fsys, filepath.ToSlash(src.Name)); err != nil {
				return nil, nil, root, fmt.Errorf("service: open %s: %w", src.Name, err)
			}
		}
		read := func(name string) ([]byte, error) {
			if int64(len(name)) > 4096 {
				return nil, lang.ErrImportRefused
			}
			b, err := fs.ReadFile(fsys, filepath.ToSlash(filepath.Clean(name)))
			if err != nil {
				return nil, err
			}
			if len(b) > lang.MaxImportSize {
				return nil, fmt.Errorf("%w: larger than %d bytes", lang.ErrImportRefused, lang.MaxImportSize)
			}
			return b, nil
		}
		return data, read, root, nil
	default:
		data := src.Data
		if data == nil {
			var err error
			if data, err = os.ReadFile(src.Name); err != nil {
				return nil, nil, root, fmt.Errorf("service: open: %w", err)
			}
		}
		return data, lang.ImportReader(root), root, nil
	}
}

// loadOWF loads an ollama-workflows document as a module of one workflow.
// Problems in the document are diagnostics naming line, column and JSON
// path.
func loadOWF(name string, src []byte) (*lang.Module, flow.Diagnostics, error) {
	doc, err := owf.Load(name, src, nil)
	var el owf.ErrorList
	if errors.As(err, &el) {
		return lang.NewModule(name, src), el.Diagnostics(), nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("service: open %s: %w", name, err)
	}
	var ds flow.Diagnostics
	for _, w := range doc.Warnings {
		ds = append(ds, w.Diagnostic(flow.Warning))
	}
	w, err := owf.Compile(doc)
	if err != nil {
		return nil, nil, fmt.Errorf("service: open %s: %w", name, err)
	}
	return lang.NewModule(name, src, w), ds, nil
}

// pick returns the workflow called name, or the module's main workflow
// when name is empty.
func pick(m *lang.Module, file, name string) (*flow.Workflow, error) {
	if name == "" {
		if w := m.Main(); w != nil {
			return w, nil
		}
		return nil, &NoWorkflowError{File: file}
	}
	if w := m.Workflow(name); w != nil {
		return w, nil
	}
	e := &NoWorkflowError{File: file, Name: name}
	for _, w := range m.Workflows {
		e.Have = append(e.Have, w.Name)
	}
	return nil, e
}

// Dedupe drops diagnostics that repeat an earlier one exactly (the same
// subworkflow compiled from two places reports its findings twice),
// keeping the order of the rest.
func Dedupe(ds flow.Diagnostics) flow.Diagnostics { return dedupe(ds) }

// dedupe is Dedupe.
func dedupe(ds flow.Diagnostics) flow.Diagnostics {
	type key struct {
		pos  flow.Pos
		sev  flow.Severity
		code string
		msg  string
	}
	seen := make(map[key]bool, len(ds))
	var out flow.Diagnostics
	for _, d := range ds {
		k := key{d.Pos, d.Severity, d.Code, d.Msg}
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

// bundleVersion is the version of the canonical source's layout.
const bundleVersion = 1

// bundle is the canonical source of a workflow: the files of its module,
// named relative to the root's directory, root first then imports in
// load order, and the workflow chosen. Its JSON encoding is deterministic
// (fields in a fixed order, files in load order), so equal sources have
// equal digests.
type bundle struct {
	Version  int          `json:"weft_source"`
	Format   Format       `json:"format"`
	Workflow string       `json:"workflow,omitempty"`
	Files    []bundleFile `json:"files"`
}

// bundleFile is one file of a bundle.
type bundleFile struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// canonical encodes the module's sources as a bundle.
func canonical(format Format, rootName, root, workflow string, m *lang.Module) ([]byte, error) {
	b := bundle{Version: bundleVersion, Format: format, Workflow: workflow}
	seen := map[string]bool{}
	add := func(name string) error {
		src, ok := m.Sources[name]
		if !ok || seen[name] {
			return nil
		}
		seen[name] = true
		rel, err := filepath.Rel(root, name)
		if err != nil || !filepath.IsLocal(rel) {
			return fmt.Errorf("service: open %s: %s is outside the root's directory", rootName, name)
		}
		if !utf8.Valid(src) {
			return fmt.Errorf("service: open %s: %s is not UTF-8 text", rootName, name)
		}
		b.Files = append(b.Files, bundleFile{Name: filepath.ToSlash(rel), Text: string(src)})
		return nil
	}
	if len(m.Files) == 0 {
		if err := add(rootName); err != nil {
			return nil, err
		}
	}
	for _, f := range m.Files {
		if err := add(f.Name); err != nil {
			return nil, err
		}
	}
	// Sources a front-end keeps without a parsed file (ollama-workflows).
	rest := make([]string, 0, len(m.Sources))
	for name := range m.Sources {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	for _, name := range rest {
		if err := add(name); err != nil {
			return nil, err
		}
	}
	if len(b.Files) == 0 {
		return nil, fmt.Errorf("service: open %s: the module kept no source", rootName)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&b); err != nil {
		return nil, fmt.Errorf("service: open %s: %w", rootName, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeBundle reads a canonical source.
func decodeBundle(data []byte) (*bundle, error) {
	var b bundle
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return nil, &SourceError{Reason: fmt.Sprintf("not a canonical source: %v", err)}
	}
	switch {
	case b.Version != bundleVersion:
		return nil, &SourceError{Reason: fmt.Sprintf("canonical source version %d, want %d", b.Version, bundleVersion)}
	case len(b.Files) == 0:
		return nil, &SourceError{Reason: "canonical source without files"}
	case b.Format != FormatWF && b.Format != FormatOWF:
		return nil, &SourceError{Reason: fmt.Sprintf("canonical source of format %q", b.Format)}
	}
	for i, f := range b.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Name)) {
			return nil, &SourceError{Reason: fmt.Sprintf("files[%d]: name %q is not a local path", i, f.Name)}
		}
		if slices.ContainsFunc(b.Files[:i], func(g bundleFile) bool { return g.Name == f.Name }) {
			return nil, &SourceError{Reason: fmt.Sprintf("files[%d]: %q twice", i, f.Name)}
		}
	}
	return &b, nil
}

// source makes the Source that opens b again: its root with imports read
// from its other files.
func (b *bundle) source() Source {
	files := make(map[string][]byte, len(b.Files))
	for _, f := range b.Files {
		files[filepath.Clean(filepath.FromSlash(f.Name))] = []byte(f.Text)
	}
	root := filepath.FromSlash(b.Files[0].Name)
	return Source{
		Name:     root,
		Data:     files[filepath.Clean(root)],
		FS:       bundleFS(files),
		Workflow: b.Workflow,
		Format:   b.Format,
	}
}

// bundleFS serves a bundle's files to the import reader.
type bundleFS map[string][]byte

// Open implements fs.FS for fs.ReadFile.
func (b bundleFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
}

// ReadFile implements fs.ReadFileFS.
func (b bundleFS) ReadFile(name string) ([]byte, error) {
	data, ok := b[filepath.Clean(filepath.FromSlash(name))]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return slices.Clone(data), nil
}

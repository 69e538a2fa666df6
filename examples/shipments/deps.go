package shipments

import (
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/weftlang/weft/llm"
	"github.com/weftlang/weft/search"
)

// The defaults of Deps' zero fields.
const (
	DefaultIndex     = "shipments"
	DefaultMaxRounds = 6
	DefaultMaxSteps  = 30
)

// Deps are the agent's dependencies and settings, passed to New. Model and
// Backend are required; a zero setting takes its default.
type Deps struct {
	// Model answers the LLM calls: F01 and build_query (structured output),
	// summarize (plain text). Required.
	Model llm.Model
	// ModelName is put in each request's Model field; "" uses the
	// client's model.
	ModelName string
	// Backend runs the searches: search/bleve (embedded) or search/es (a
	// cluster). Required.
	Backend search.Backend
	// Index is the index searched; "" means DefaultIndex ("shipments").
	Index string
	// Logger receives each node's "F01 reiterate_intention" line at info,
	// its decisions at debug, and the errors it recovers from at warn or
	// error; nil discards them.
	Logger *slog.Logger
	// Now is the clock relative dates are resolved against ("yesterday");
	// nil means time.Now. The generated dataset's "today" is
	// dataset.AsOfDate.
	Now func() time.Time

	// PageSize is the page size when the user gives none: 0 means
	// DefaultPageSize (20); at most MaxPageSize.
	PageSize int
	// MaxRepairs bounds how often a structured-output call is re-asked
	// after a reply that does not match its schema (structured.Options):
	// 0 means structured.DefaultMaxRepairs, negative never.
	MaxRepairs int
	// CallTimeout bounds each LLM and search call; a call that takes
	// longer fails and its node falls back. 0 means no bound.
	CallTimeout time.Duration
	// MaxRounds bounds the planner's rounds in one turn: 0 means
	// DefaultMaxRounds.
	MaxRounds int
	// MaxSteps bounds the node executions of one run: 0 means
	// DefaultMaxSteps.
	MaxSteps int
}

// settings are Deps with the defaults filled in.
type settings struct {
	Deps
}

func (d Deps) settings() (*settings, error) {
	var errs []error
	if d.Model == nil {
		errs = append(errs, errors.New("shipments: Deps.Model is nil"))
	}
	if d.Backend == nil {
		errs = append(errs, errors.New("shipments: Deps.Backend is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s := &settings{Deps: d}
	if s.Index == "" {
		s.Index = DefaultIndex
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	s.PageSize = PageSizeOf(s.PageSize, DefaultPageSize)
	if s.MaxRounds <= 0 {
		s.MaxRounds = DefaultMaxRounds
	}
	if s.MaxSteps <= 0 {
		s.MaxSteps = DefaultMaxSteps
	}
	return s, nil
}

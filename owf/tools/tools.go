package tools

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/weftlang/weft/llm"
)

// Default base URLs: the real services, as the reference calls them.
const (
	DefaultJinaURL        = "https://r.jina.ai/"
	DefaultSerperURL      = "https://google.serper.dev"
	DefaultBrowserlessURL = "http://0.0.0.0:3000"
	DefaultDuckDuckGoURL  = "https://duckduckgo.com/html/"
	DefaultStockURL       = "https://www.google.com/finance/quote/"
)

// DefaultTimeout bounds a request of a tool whose Options.Client is nil.
const DefaultTimeout = 30 * time.Second

// MaxBody is the largest response body a tool reads, in bytes; a larger
// one is a *ResponseError.
const MaxBody = 32 << 20

// Options points the tools at their services and carries the keys the
// reference reads from the environment. The zero value calls the real
// services without keys.
type Options struct {
	Client *http.Client // nil: a client with a DefaultTimeout timeout

	// Base URLs; empty means the real service (the Default*URL constants).
	JinaURL        string // GET JinaURL + website
	SerperURL      string // POST SerperURL + "/" + search_type
	BrowserlessURL string // POST BrowserlessURL + "/content?token=" + token
	DuckDuckGoURL  string // GET DuckDuckGoURL + "?q=" + query, percent-encoded
	StockURL       string // GET StockURL + ticker + ":" + exchange + "?hl=en"

	// Keys, read from JINA_API_KEY, SERPER_API_KEY, BROWSERLESS_TOKEN and
	// API_KEY in the reference; the caller reads the environment. Empty
	// means not set.
	JinaKey, SerperKey, BrowserlessToken, APIKey string

	// SerperKeySet tells whether SERPER_API_KEY is present in the
	// environment, even if empty: config.tools ["ALL"] then picks serper
	// rather than duckduckgo, and google_search_tool sends the (possibly
	// empty) key rather than failing.
	SerperKeySet bool
}

func (o Options) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return &http.Client{Timeout: DefaultTimeout}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Tool is one tool as the model sees it and as it runs. Call returns the
// tool's text output verbatim (not JSON-encoded); args are the tool-call
// arguments, a JSON object (empty or null means {}).
type Tool struct {
	Def  llm.Tool // Def.Name is the name shown to the model, e.g. "jina_web_scraper"
	Call func(ctx context.Context, args json.RawMessage) (string, error)
}

// Predefined returns the tool of a config.tools name: browserless, jina,
// serper, duckduckgo, stock or scraper. Any other name (including "ALL",
// which only Resolve expands) is an *UnknownToolError with Index -1.
func Predefined(name string, opts Options) (*Tool, error) {
	h := &httpc{client: opts.client()}
	switch name {
	case "jina":
		return jinaTool(h, opts), nil
	case "serper":
		return serperTool(h, opts), nil
	case "browserless":
		return browserlessTool(h, opts), nil
	case "duckduckgo":
		return ddgTool(h, opts), nil
	case "stock":
		return stockTool(h, opts), nil
	case "scraper":
		return scraperTool(h), nil
	}
	return nil, &UnknownToolError{Index: -1, Name: name}
}

// Resolve expands config.tools into tools, in order. Exactly ["ALL"] is
// duckduckgo (serper when opts.SerperKeySet), stock and jina; "ALL" with
// other names, or any unknown name, is an *UnknownToolError naming the
// first such index and name. Duplicates are kept, as in the reference.
func Resolve(names []string, opts Options) ([]*Tool, error) {
	if len(names) == 1 && names[0] == "ALL" {
		search := "duckduckgo"
		if opts.SerperKeySet {
			search = "serper"
		}
		names = []string{search, "stock", "jina"}
	}
	out := make([]*Tool, 0, len(names))
	for i, name := range names {
		t, err := Predefined(name, opts)
		if err != nil {
			return nil, &UnknownToolError{Index: i, Name: name}
		}
		out = append(out, t)
	}
	return out, nil
}

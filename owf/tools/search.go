package tools

import (
	"context"
)

// Tool names in the errors of WebSearch.
const (
	SearchSerperName     = "search/serper"
	SearchDuckDuckGoName = "search/duckduckgo"
)

// SearchRequest is what the HEAD `search` operator reads from its last
// message (spec §5.3): query, and the optional search_type, lang and
// n_results.
type SearchRequest struct {
	Query      string
	SearchType string // Serper only: search (when empty), scholar or news
	Lang       string // Serper only: "" means "en"
	NResults   int    // 0 or less: not given
}

// WebSearch runs the web search of the `search` operator.
//
// With opts.SerperKey not empty it is a raw Serper search: POST
// <SerperURL>/<search_type>, header X-API-KEY, body {q, gl, hl, page: 1,
// num} with hl = lang or "en", gl = "us" when hl is "en" else hl, num =
// min(n_results or 5, 10), num left out for scholar; the result is the
// whole response, re-encoded as compact JSON with sorted keys. A
// search_type other than search, scholar or news is an *ArgsError, a
// status other than 2xx a *StatusError, a body that is not JSON a
// *ResponseError.
//
// Otherwise it searches DuckDuckGo's HTML page (GET
// <DuckDuckGoURL>?q=<query, percent-encoded>) and returns its results as
// a JSON array of {link, snippet, title}, the first NResults when
// NResults > 0; a result block missing its title, link or snippet is
// skipped. SearchType and Lang are ignored.
func WebSearch(ctx context.Context, req SearchRequest, opts Options) (string, error) {
	h := &httpc{client: opts.client()}
	if opts.SerperKey == "" {
		base := orDefault(opts.DuckDuckGoURL, DefaultDuckDuckGoURL)
		results, err := ddgSearch(ctx, h, SearchDuckDuckGoName, base, req.Query)
		if err != nil {
			return "", err
		}
		if req.NResults > 0 && len(results) > req.NResults {
			results = results[:req.NResults]
		}
		return mustJSON(results), nil
	}
	stype := req.SearchType
	if stype == "" {
		stype = "search"
	}
	if err := checkSearchType(SearchSerperName, stype); err != nil {
		return "", err
	}
	lang := req.Lang
	if lang == "" {
		lang = "en"
	}
	n := req.NResults
	if n <= 0 {
		n = 5
	}
	base := orDefault(opts.SerperURL, DefaultSerperURL)
	resp, err := serperPost(ctx, h, SearchSerperName, base, opts.SerperKey, stype, serperBody(req.Query, lang, min(n, 10), stype))
	if err != nil {
		return "", err
	}
	out, err := canonical(resp.body)
	if err != nil {
		return "", &ResponseError{Tool: SearchSerperName, Reason: "the response is not JSON", Err: err}
	}
	return out, nil
}

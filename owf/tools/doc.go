// Package tools implements the tools of ollama-workflows (spec §7 of
// ../shared/reference/ollama-workflows.md) as real HTTP clients: the six
// predefined tools of config.tools (browserless, jina, serper, duckduckgo,
// stock, scraper), the custom tools of config.custom_tools (mode
// "http_request" and mode "custom", and the older single
// config.custom_tool), and the web search of the HEAD `search` operator
// (spec §5.3 step 4).
//
// Every service's base URL is an Options field, so tests and self-hosted
// deployments point the tools elsewhere; the keys the reference reads from
// the environment (JINA_API_KEY, SERPER_API_KEY, BROWSERLESS_TOKEN,
// API_KEY) are Options fields too: the caller reads the environment, this
// package never does. The package keeps no state: a Tool holds its own
// options and client.
//
// A Tool's Call returns the tool's output text verbatim, as the reference's
// tool returns it to the executor; JSON this package writes (DuckDuckGo
// results, stock rows, Serper's raw response, request bodies, parameter
// schemas) is compact with sorted keys, as serde_json without
// preserve_order writes it, floats included ("100.0", "1e21").
//
// Errors are exported types that errors.As finds: *UnknownToolError,
// *ArgsError, *MethodError, *ConfigError, *RequestError (which unwraps to
// the cause, so errors.Is(err, context.Canceled) works), *StatusError,
// *ResponseError and *CustomModeError. Every error of a call names the
// tool.
//
// # Divergences from the reference
//
// Each panic of the reference (spec §5.5) is an ordinary error here:
//
//   - an unknown name in config.tools, or "ALL" with other names, is an
//     *UnknownToolError naming the index and the name (the reference
//     panics when a function-calling task runs);
//   - a search_type other than search, scholar or news (google_search_tool
//     and the Serper search of the `search` operator) is an *ArgsError (the
//     reference fails an assert);
//   - a Serper result whose title, link, snippet, date, position (or the
//     scholar and news fields) is present but not a string, respectively
//     not an integer, is a *ResponseError (the reference panics; a missing
//     field is still "none" or -1, as in the reference);
//   - a DuckDuckGo result block (.web-result) missing its title
//     (.result__a), link (.result__url) or snippet (.result__snippet) is
//     skipped, both in ddg_searcher and in the `search` operator (the
//     reference panics);
//   - a custom HTTP tool called with a non-string argument, or with
//     arguments that are not a JSON object, for a method other than GET is
//     an *ArgsError (the reference panics);
//   - a missing or non-string query of ddg_searcher is an *ArgsError (the
//     reference panics; the other tools already fail with an error);
//   - google_search_tool without a Serper key (Options.SerperKey empty and
//     Options.SerperKeySet false) and browserless_web_scraper without a
//     token (Options.BrowserlessToken empty) fail with a *ConfigError when
//     called (the reference panics on an absent variable).
//
// Other differences:
//
//   - The DuckDuckGo query is percent-encoded as a query value (url.QueryEscape,
//     a space is "+"); the reference appends it to "?q=" raw.
//   - The stock ticker and exchange are percent-encoded as path segments
//     (url.PathEscape) and the browserless token as a query value
//     (url.QueryEscape); the reference inserts them raw. Plain tickers,
//     exchanges and tokens are unchanged by this.
//   - JSON output has sorted keys everywhere: ddg_searcher and the DuckDuckGo
//     search give [{"link","snippet","title"}] where the reference's tool
//     writes title, link, snippet in that order (the executor re-sorts a
//     lone JSON result anyway; the order shows only when several outputs
//     are joined), stock_scraper's object is sorted where the reference's
//     follows a Rust HashMap's order, and a custom HTTP tool's request body
//     and parameter schema ("required" included) are sorted where the
//     reference's follow a HashMap's order.
//   - A Serper response with a status other than 2xx is a *StatusError,
//     for google_search_tool and for the `search` operator. The reference
//     decodes the body whatever the status: the tool then fails on the
//     missing "organic" ("Invalid response format"), and the operator
//     returns Serper's error object (e.g. {"message":"Unauthorized.",...})
//     as a successful search result.
//   - Empty keys mean "not set": JinaKey, APIKey and BrowserlessToken add
//     their header or are accepted only when non-empty. The reference
//     tests presence, so a variable set to "" sends "Authorization: Bearer "
//     (jina, custom HTTP) or "token=" (browserless). SerperKeySet keeps the
//     presence rule where the spec needs it: "ALL" picks serper when the
//     variable is present, and google_search_tool then sends the key even
//     if empty, as the reference does.
//   - n_results: in the `search` operator (SearchRequest.NResults) 0 or
//     less means "not given" (Serper num 5, DuckDuckGo not truncated); the
//     reference's Some(0) sends num 0 and truncates to an empty list. The
//     tool google_search_tool reads n_results as the reference does
//     (an unsigned integer literal, anything else means 5; 0 is 0).
//   - browserless_web_scraper re-chunks its text at 1000 characters with a
//     greedy splitter that keeps the coarsest of line breaks, sentence ends,
//     whitespace and characters that fits, and trims each chunk; the
//     reference uses text-splitter 0.13, whose chunk boundaries can differ
//     on long text (same chunk size bound, same "\n \n" join).
//   - A response body larger than MaxBody (32 MiB) is a *ResponseError; the
//     reference reads any size. A request gets no answer after
//     DefaultTimeout (30 s) unless Options.Client says otherwise; reqwest's
//     default client has no timeout.
//   - A URL built from a model's argument (jina's website, the scraper's
//     website) must parse as a URL (a space in it is a *RequestError);
//     reqwest percent-encodes such characters instead.
//   - Requests carry Go's default User-Agent (Go-http-client/1.1); reqwest
//     sends none by default.
//   - The body is decoded as text the way reqwest's text() does it (the
//     charset of Content-Type, else UTF-8, invalid bytes replaced by
//     U+FFFD), except that a truncated multi-byte sequence gives one
//     U+FFFD per byte.
//
// Unchanged on purpose: jina, website_scraper, browserless, duckduckgo,
// stock and custom HTTP tools read the body whatever the HTTP status
// (a 404 page is scraped like any other, a custom tool returns the error
// body); a custom GET sends no query string; body values of a custom tool
// are never sent; "ALL" must be the only name.
package tools

package tools

import (
	"github.com/weftlang/weft/owf/internal/split"

	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/weftlang/weft/llm"
)

// The names of the predefined tools as the model sees them.
const (
	JinaName        = "jina_web_scraper"
	SerperName      = "google_search_tool"
	BrowserlessName = "browserless_web_scraper"
	DuckDuckGoName  = "ddg_searcher"
	StockName       = "stock_scraper"
	ScraperName     = "website_scraper"
)

// prop is one property of a parameter schema.
func prop(typ, desc string) map[string]any {
	return map[string]any{"type": typ, "description": desc}
}

// schema is an object schema, canonical JSON.
func schema(props map[string]any, required ...string) json.RawMessage {
	if required == nil {
		required = []string{}
	}
	return json.RawMessage(mustJSON(map[string]any{
		"type":       "object",
		"properties": props,
		"required":   required,
	}))
}

// websiteSchema is the parameters of the three scrapers.
func websiteSchema() json.RawMessage {
	return schema(map[string]any{"website": prop("string", "The URL of the website to scrape")}, "website")
}

// jinaTool: GET JinaURL + website, with the key as a bearer token; the
// body whatever the status.
func jinaTool(h *httpc, opts Options) *Tool {
	base := orDefault(opts.JinaURL, DefaultJinaURL)
	key := opts.JinaKey
	return &Tool{
		Def: llm.Tool{
			Name:        JinaName,
			Description: "Scrapes text content from websites using Jina API and returns in readable format.",
			Parameters:  websiteSchema(),
		},
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			m, err := argsObject(JinaName, args)
			if err != nil {
				return "", err
			}
			website, err := requiredStr(JinaName, m, "website")
			if err != nil {
				return "", err
			}
			hdr := http.Header{}
			if key != "" {
				hdr.Set("Authorization", "Bearer "+key)
			}
			resp, err := h.do(ctx, request{tool: JinaName, method: http.MethodGet, url: base + website, header: hdr})
			if err != nil {
				return "", err
			}
			return resp.text(), nil
		},
	}
}

// serperTool: POST SerperURL/<search_type>, the organic results formatted
// as lines.
func serperTool(h *httpc, opts Options) *Tool {
	base := orDefault(opts.SerperURL, DefaultSerperURL)
	key, keySet := opts.SerperKey, opts.SerperKeySet || opts.SerperKey != ""
	return &Tool{
		Def: llm.Tool{
			Name:        SerperName,
			Description: "Conducts a web search using a specified search type and returns the results.",
			Parameters: schema(map[string]any{
				"query":     prop("string", "The search query"),
				"lang":      prop("string", "The language for the search"),
				"n_results": prop("integer", "The number of results to return"),
			}, "query"),
		},
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			m, err := argsObject(SerperName, args)
			if err != nil {
				return "", err
			}
			query, err := requiredStr(SerperName, m, "query")
			if err != nil {
				return "", err
			}
			stype, ok := str(m, "search_type")
			if !ok {
				stype = "search"
			}
			lang, ok := str(m, "lang")
			if !ok {
				lang = "en"
			}
			n := uint64(5)
			if v, ok := unsigned(m, "n_results"); ok {
				n = v
			}
			if err := checkSearchType(SerperName, stype); err != nil {
				return "", err
			}
			if !keySet {
				return "", &ConfigError{Tool: SerperName, Reason: "SERPER_API_KEY is not set (Options.SerperKey)"}
			}
			num := int(min(n, 10))
			resp, err := serperPost(ctx, h, SerperName, base, key, stype, serperBody(query, lang, num, stype))
			if err != nil {
				return "", err
			}
			var v any
			if err := decodeJSON(resp.body, &v); err != nil {
				return "", &ResponseError{Tool: SerperName, Reason: "the response is not JSON", Err: err}
			}
			obj, _ := v.(map[string]any)
			organic, ok := obj["organic"].([]any)
			if !ok {
				return "", &ResponseError{Tool: SerperName, Reason: `Invalid response format: no "organic" list`}
			}
			var lines []string
			for _, r := range organic[:min(num, len(organic))] {
				s, err := formatSerper(stype, r)
				if err != nil {
					return "", err
				}
				lines = append(lines, s)
			}
			return strings.Join(lines, "\n"), nil
		},
	}
}

// checkSearchType accepts the three search types of Serper.
func checkSearchType(tool, stype string) error {
	switch stype {
	case "search", "scholar", "news":
		return nil
	}
	return &ArgsError{Tool: tool, Arg: "search_type", Reason: strconv.Quote(stype) + " is not search, scholar or news"}
}

// serperBody is {q, gl, hl, page: 1, num}, num dropped for scholar.
func serperBody(query, lang string, num int, stype string) []byte {
	gl := lang
	if lang == "en" {
		gl = "us"
	}
	body := map[string]any{"q": query, "gl": gl, "hl": lang, "page": 1, "num": num}
	if stype == "scholar" {
		delete(body, "num")
	}
	return []byte(mustJSON(body))
}

// serperPost sends a Serper request; a status other than 2xx is a
// *StatusError.
func serperPost(ctx context.Context, h *httpc, tool, base, key, stype string, body []byte) (*response, error) {
	hdr := http.Header{}
	hdr.Set("X-API-KEY", key)
	resp, err := h.do(ctx, request{
		tool: tool, method: http.MethodPost, url: base + "/" + stype,
		header: hdr, body: body, jsonCT: true,
	})
	if err != nil {
		return nil, err
	}
	if err := statusError(tool, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// decodeJSON decodes one JSON document with numbers kept as literals.
func decodeJSON(data []byte, v *any) error {
	s, err := canonical(data) // checks trailing data and number range
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	return dec.Decode(v)
}

// unsigned returns argument k if it is an integer literal that fits u64
// (serde's as_u64: 5 yes; 5.0, -1, "5" no).
func unsigned(m map[string]json.RawMessage, k string) (uint64, bool) {
	raw := strings.TrimSpace(string(m[k]))
	if raw == "" || strings.ContainsAny(raw, ".eE") {
		return 0, false
	}
	u, err := strconv.ParseUint(raw, 10, 64)
	return u, err == nil
}

// formatSerper renders one organic result as the reference's lines:
// search: title, link, snippet, date, position; scholar: title, link,
// publicationInfo, snippet, year, citedBy; news: title, link, snippet,
// date, source, imageUrl, position. A missing string is "none", a missing
// integer -1.
func formatSerper(stype string, r any) (string, error) {
	obj, _ := r.(map[string]any) // not an object: every field is missing
	var fields []string
	var types []byte
	switch stype {
	case "search":
		fields, types = []string{"title", "link", "snippet", "date", "position"}, []byte("ssssi")
	case "scholar":
		fields, types = []string{"title", "link", "publicationInfo", "snippet", "year", "citedBy"}, []byte("ssssii")
	default: // news
		fields, types = []string{"title", "link", "snippet", "date", "source", "imageUrl", "position"}, []byte("ssssssi")
	}
	lines := make([]string, len(fields))
	for i, f := range fields {
		v, present := obj[f]
		switch {
		case !present && types[i] == 's':
			lines[i] = "none"
		case !present:
			lines[i] = "-1"
		case types[i] == 's':
			s, ok := v.(string)
			if !ok {
				return "", &ResponseError{Tool: SerperName, Reason: "organic result field " + strconv.Quote(f) + " is not a string"}
			}
			lines[i] = s
		default:
			n, ok := v.(json.Number)
			x, err := strconv.ParseInt(string(n), 10, 64) // fails on 1.0 and 1e2, as serde's as_i64
			if !ok || err != nil {
				return "", &ResponseError{Tool: SerperName, Reason: "organic result field " + strconv.Quote(f) + " is not an integer"}
			}
			lines[i] = strconv.FormatInt(int64(int32(x)), 10) // the reference keeps an i32
		}
	}
	return strings.Join(lines, "\n"), nil
}

// browserlessTool: POST BrowserlessURL/content?token=…, {url}; the page's
// text re-chunked.
func browserlessTool(h *httpc, opts Options) *Tool {
	base := orDefault(opts.BrowserlessURL, DefaultBrowserlessURL)
	token := opts.BrowserlessToken
	return &Tool{
		Def: llm.Tool{
			Name:        BrowserlessName,
			Description: "Scrapes text content from websites and splits it into manageable chunks.",
			Parameters:  websiteSchema(),
		},
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			m, err := argsObject(BrowserlessName, args)
			if err != nil {
				return "", err
			}
			website, err := requiredStr(BrowserlessName, m, "website")
			if err != nil {
				return "", err
			}
			if token == "" {
				return "", &ConfigError{Tool: BrowserlessName, Reason: "BROWSERLESS_TOKEN is not set (Options.BrowserlessToken)"}
			}
			resp, err := h.do(ctx, request{
				tool: BrowserlessName, method: http.MethodPost,
				url:   base + "/content?token=" + url.QueryEscape(token),
				shown: base + "/content?token=REDACTED",
				body:  []byte(mustJSON(map[string]string{"url": website})), jsonCT: true, noCache: true,
			})
			if err != nil {
				return "", err
			}
			body := pageText(parseHTML(resp.text()), "")
			return strings.Join(split.Chunks(body, 1000), "\n \n"), nil
		},
	}
}

// ddgTool: DuckDuckGo's HTML results as a JSON array.
func ddgTool(h *httpc, opts Options) *Tool {
	base := orDefault(opts.DuckDuckGoURL, DefaultDuckDuckGoURL)
	return &Tool{
		Def: llm.Tool{
			Name:        DuckDuckGoName,
			Description: "Searches the web using DuckDuckGo's HTML interface.",
			Parameters: json.RawMessage(mustJSON(map[string]any{
				"description": "This tool lets you search the web using DuckDuckGo. The input should be a search query.",
				"type":        "object",
				"properties":  map[string]any{"query": prop("string", "The search query to send to DuckDuckGo")},
				"required":    []string{"query"},
			})),
		},
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			m, err := argsObject(DuckDuckGoName, args)
			if err != nil {
				return "", err
			}
			query, err := requiredStr(DuckDuckGoName, m, "query")
			if err != nil {
				return "", err
			}
			results, err := ddgSearch(ctx, h, DuckDuckGoName, base, query)
			if err != nil {
				return "", err
			}
			return mustJSON(results), nil
		},
	}
}

// ddgSearch fetches DuckDuckGo's HTML page for query and scrapes its
// .web-result blocks; a block missing its title, link or snippet is
// skipped.
func ddgSearch(ctx context.Context, h *httpc, tool, base, query string) ([]map[string]string, error) {
	resp, err := h.do(ctx, request{tool: tool, method: http.MethodGet, url: base + "?q=" + url.QueryEscape(query)})
	if err != nil {
		return nil, err
	}
	doc := parseHTML(resp.text())
	results := []map[string]string{}
	for _, block := range selectAll(doc, class("web-result")) {
		title := selectFirst(block, class("result__a"))
		link := selectFirst(block, class("result__url"))
		snippet := selectFirst(block, class("result__snippet"))
		if title == nil || link == nil || snippet == nil {
			continue
		}
		results = append(results, map[string]string{
			"title":   text(title, ""),
			"link":    strings.TrimSpace(text(link, "")),
			"snippet": text(snippet, ""),
		})
	}
	return results, nil
}

// stockTool: Google Finance's label/value rows as a JSON object.
func stockTool(h *httpc, opts Options) *Tool {
	base := orDefault(opts.StockURL, DefaultStockURL)
	return &Tool{
		Def: llm.Tool{
			Name:        StockName,
			Description: "Scrapes stock information from Google Finance.",
			Parameters: schema(map[string]any{
				"exchange": prop("string", "The stock exchange market identifier code (MIC)"),
				"ticker":   prop("string", "The ticker symbol of the stock"),
			}, "exchange", "ticker"),
		},
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			m, err := argsObject(StockName, args)
			if err != nil {
				return "", err
			}
			exchange, err := requiredStr(StockName, m, "exchange")
			if err != nil {
				return "", err
			}
			ticker, err := requiredStr(StockName, m, "ticker")
			if err != nil {
				return "", err
			}
			u := base + url.PathEscape(ticker) + ":" + url.PathEscape(exchange) + "?hl=en"
			resp, err := h.do(ctx, request{tool: StockName, method: http.MethodGet, url: u})
			if err != nil {
				return "", err
			}
			doc := parseHTML(resp.text())
			rows := map[string]string{}
			for _, item := range selectAll(doc, and(tag("div"), class("gyFHrc"))) {
				label := selectFirst(item, and(tag("div"), class("mfs7Fc")))
				value := selectFirst(item, and(tag("div"), class("P6K39c")))
				if label != nil && value != nil {
					rows[text(label, "")] = text(value, "")
				}
			}
			return mustJSON(rows), nil
		},
	}
}

// scraperTool: GET the website itself; its text cut into sentences.
func scraperTool(h *httpc) *Tool {
	return &Tool{
		Def: llm.Tool{
			Name:        ScraperName,
			Description: "Scrapes text content from websites and splits it into manageable chunks.",
			Parameters:  websiteSchema(),
		},
		Call: func(ctx context.Context, args json.RawMessage) (string, error) {
			m, err := argsObject(ScraperName, args)
			if err != nil {
				return "", err
			}
			website, err := requiredStr(ScraperName, m, "website")
			if err != nil {
				return "", err
			}
			resp, err := h.do(ctx, request{tool: ScraperName, method: http.MethodGet, url: website})
			if err != nil {
				return "", err
			}
			body := pageText(parseHTML(resp.text()), " ")
			return strings.Join(strings.Split(body, ". "), "\n\n"), nil
		},
	}
}

package tools

import (
	"net/http"
	"strings"
	"testing"
)

func TestPredefinedDefinitions(t *testing.T) {
	website := `{"properties":{"website":{"description":"The URL of the website to scrape","type":"string"}},"required":["website"],"type":"object"}`
	cases := []struct {
		config, name, desc, params string
	}{
		{"jina", "jina_web_scraper", "Scrapes text content from websites using Jina API and returns in readable format.", website},
		{"serper", "google_search_tool", "Conducts a web search using a specified search type and returns the results.",
			`{"properties":{"lang":{"description":"The language for the search","type":"string"},"n_results":{"description":"The number of results to return","type":"integer"},"query":{"description":"The search query","type":"string"}},"required":["query"],"type":"object"}`},
		{"browserless", "browserless_web_scraper", "Scrapes text content from websites and splits it into manageable chunks.", website},
		{"duckduckgo", "ddg_searcher", "Searches the web using DuckDuckGo's HTML interface.",
			`{"description":"This tool lets you search the web using DuckDuckGo. The input should be a search query.","properties":{"query":{"description":"The search query to send to DuckDuckGo","type":"string"}},"required":["query"],"type":"object"}`},
		{"stock", "stock_scraper", "Scrapes stock information from Google Finance.",
			`{"properties":{"exchange":{"description":"The stock exchange market identifier code (MIC)","type":"string"},"ticker":{"description":"The ticker symbol of the stock","type":"string"}},"required":["exchange","ticker"],"type":"object"}`},
		{"scraper", "website_scraper", "Scrapes text content from websites and splits it into manageable chunks.", website},
	}
	for _, c := range cases {
		tool := predefined(t, c.config, Options{})
		eq(t, c.config+" name", tool.Def.Name, c.name)
		eq(t, c.config+" description", tool.Def.Description, c.desc)
		eq(t, c.config+" parameters", string(tool.Def.Parameters), c.params)
		if tool.Call == nil {
			t.Errorf("%s: Call is nil", c.config)
		}
	}
}

func TestPredefinedUnknown(t *testing.T) {
	for _, name := range []string{"ALL", "google", "Jina", ""} {
		tool, err := Predefined(name, Options{})
		if tool != nil {
			t.Errorf("Predefined(%q) returned a tool", name)
		}
		e := asError[*UnknownToolError](t, err)
		eq(t, "name", e.Name, name)
		eq(t, "index", e.Index, -1)
	}
	_, err := Predefined("google", Options{})
	eq(t, "message", err.Error(), `tools: unknown tool "google" (known: browserless, jina, serper, duckduckgo, stock, scraper, or ["ALL"] alone)`)
}

func names(tools []*Tool) string {
	var s []string
	for _, t := range tools {
		s = append(s, t.Def.Name)
	}
	return strings.Join(s, ",")
}

func TestResolve(t *testing.T) {
	cases := []struct {
		names []string
		opts  Options
		want  string
	}{
		{[]string{"ALL"}, Options{}, "ddg_searcher,stock_scraper,jina_web_scraper"},
		{[]string{"ALL"}, Options{SerperKeySet: true}, "google_search_tool,stock_scraper,jina_web_scraper"},
		{[]string{"ALL"}, Options{SerperKey: "k"}, "ddg_searcher,stock_scraper,jina_web_scraper"}, // presence is SerperKeySet
		{[]string{"browserless", "jina", "serper", "duckduckgo", "stock", "scraper"}, Options{},
			"browserless_web_scraper,jina_web_scraper,google_search_tool,ddg_searcher,stock_scraper,website_scraper"},
		{[]string{"jina", "jina"}, Options{}, "jina_web_scraper,jina_web_scraper"},
		{nil, Options{}, ""},
	}
	for _, c := range cases {
		got, err := Resolve(c.names, c.opts)
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.names, err)
			continue
		}
		eq(t, strings.Join(c.names, ","), names(got), c.want)
	}
}

func TestResolveErrors(t *testing.T) {
	cases := []struct {
		names []string
		index int
		name  string
		msg   string
	}{
		{[]string{"jina", "ALL"}, 1, "ALL", `tools: "ALL" at config.tools[1] must be the only name in config.tools`},
		{[]string{"ALL", "ALL"}, 0, "ALL", `tools: "ALL" at config.tools[0] must be the only name in config.tools`},
		{[]string{"jina", "stock", "bing"}, 2, "bing", `tools: unknown tool "bing" at config.tools[2] (known: browserless, jina, serper, duckduckgo, stock, scraper, or ["ALL"] alone)`},
		{[]string{"all"}, 0, "all", `tools: unknown tool "all" at config.tools[0] (known: browserless, jina, serper, duckduckgo, stock, scraper, or ["ALL"] alone)`},
	}
	for _, c := range cases {
		got, err := Resolve(c.names, Options{})
		if got != nil {
			t.Errorf("Resolve(%q) returned tools", c.names)
		}
		e := asError[*UnknownToolError](t, err)
		eq(t, "index", e.Index, c.index)
		eq(t, "name", e.Name, c.name)
		eq(t, "message", err.Error(), c.msg)
	}
}

func TestDefaultClient(t *testing.T) {
	c := Options{}.client()
	eq(t, "timeout", c.Timeout, DefaultTimeout)
	mine := &http.Client{}
	if (Options{Client: mine}).client() != mine {
		t.Error("Options.Client is not used")
	}
}

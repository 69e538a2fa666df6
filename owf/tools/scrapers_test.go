package tools

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJina(t *testing.T) {
	page := "Title: Example Domain\n\nURL Source: https://example.com/a?b=1\n\nMarkdown Content:\nThis domain is for use in examples."
	srv := newFake(t, 200, "text/plain; charset=utf-8", page)
	tool := predefined(t, "jina", Options{JinaURL: srv.URL + "/", JinaKey: "jina-key"})
	eq(t, "output", mustCall(t, tool, `{"website":"https://example.com/a?b=1"}`), page)
	r := srv.only(t)
	eq(t, "method", r.Method, "GET")
	eq(t, "uri", r.URI, "/https://example.com/a?b=1")
	wantHeader(t, r, "Authorization", "Bearer jina-key")
	eq(t, "body", r.Body, "")
}

func TestJinaWithoutKeyAndErrorStatus(t *testing.T) {
	// The reference returns the body whatever the status.
	srv := newFake(t, 402, "application/json", `{"code":402,"message":"Insufficient balance"}`)
	tool := predefined(t, "jina", Options{JinaURL: srv.URL + "/"})
	eq(t, "output", mustCall(t, tool, `{"website":"example.com"}`), `{"code":402,"message":"Insufficient balance"}`)
	r := srv.only(t)
	eq(t, "uri", r.URI, "/example.com")
	wantHeader(t, r, "Authorization")
}

func TestJinaCharset(t *testing.T) {
	// "café" in ISO-8859-1, and a stray invalid byte in UTF-8.
	srv := newFakeFunc(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/latin1" {
			w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
			w.Write([]byte("caf\xe9"))
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("a\xffb"))
	})
	tool := predefined(t, "jina", Options{JinaURL: srv.URL + "/"})
	eq(t, "latin1", mustCall(t, tool, `{"website":"latin1"}`), "café")
	eq(t, "invalid utf-8", mustCall(t, tool, `{"website":"bad"}`), "a\uFFFDb")
}

func TestScraperArguments(t *testing.T) {
	srv := newFake(t, 200, "text/plain", "unused")
	cases := []struct {
		config, args, arg, msg string
	}{
		{"jina", `{}`, "website", `tool "jina_web_scraper": argument "website": is required`},
		{"jina", `{"website":42}`, "website", `tool "jina_web_scraper": argument "website": must be a string`},
		{"jina", `{"website":null}`, "website", `tool "jina_web_scraper": argument "website": must be a string`},
		{"jina", `["https://example.com"]`, "", `tool "jina_web_scraper": arguments: not a JSON object: ["https://example.com"]`},
		{"jina", `{"website":`, "", `tool "jina_web_scraper": arguments: not valid JSON: {"website":`},
		{"scraper", ``, "website", `tool "website_scraper": argument "website": is required`},
		{"browserless", `null`, "website", `tool "browserless_web_scraper": argument "website": is required`},
		{"duckduckgo", `{"q":"go"}`, "query", `tool "ddg_searcher": argument "query": is required`},
		{"stock", `{"ticker":"AAPL"}`, "exchange", `tool "stock_scraper": argument "exchange": is required`},
		{"stock", `{"exchange":"NASDAQ"}`, "ticker", `tool "stock_scraper": argument "ticker": is required`},
		{"stock", `{"exchange":"NASDAQ","ticker":1}`, "ticker", `tool "stock_scraper": argument "ticker": must be a string`},
		{"serper", `{"lang":"en"}`, "query", `tool "google_search_tool": argument "query": is required`},
	}
	opts := Options{
		JinaURL: srv.URL + "/", SerperURL: srv.URL, BrowserlessURL: srv.URL, DuckDuckGoURL: srv.URL + "/html/",
		StockURL: srv.URL + "/quote/", SerperKey: "k", BrowserlessToken: "tok",
	}
	for _, c := range cases {
		_, err := call(t, predefined(t, c.config, opts), c.args)
		e := asError[*ArgsError](t, err)
		eq(t, c.config+" "+c.args+" arg", e.Arg, c.arg)
		eq(t, c.config+" "+c.args+" message", err.Error(), c.msg)
	}
	eq(t, "requests made", srv.count(), 0)
}

func TestWebsiteScraper(t *testing.T) {
	page := `<!DOCTYPE html><html><head><title>Not this</title><style>p { color: red }</style></head><body>
<h1>Hello</h1>
<div>Navigation is not text. Skip it.</div>
<p>First sentence. Second <b>bold</b> sentence. Third.</p>
<h3>Sub &amp; heading</h3><p>Last. </p>
</body></html>`
	srv := newFake(t, 200, "text/html; charset=utf-8", page)
	tool := predefined(t, "scraper", Options{})
	out := mustCall(t, tool, `{"website":"`+srv.URL+`/page?x=1"}`)
	// Text nodes of an element are joined by a space, elements by a space,
	// then the text is cut at ". " and joined by blank lines.
	eq(t, "output", out, "Hello First sentence\n\nSecond  bold  sentence\n\nThird\n\nSub & heading Last\n\n")
	r := srv.only(t)
	eq(t, "method", r.Method, "GET")
	eq(t, "uri", r.URI, "/page?x=1")
}

func TestWebsiteScraperErrorPage(t *testing.T) {
	// A 404 page is scraped like any other, as in the reference.
	srv := newFake(t, 404, "text/html", `<html><body><h1>Not Found</h1><p>No such page. Sorry</p></body></html>`)
	out := mustCall(t, predefined(t, "scraper", Options{}), `{"website":"`+srv.URL+`/missing"}`)
	eq(t, "output", out, "Not Found No such page\n\nSorry")
}

func TestWebsiteScraperBadURL(t *testing.T) {
	_, err := call(t, predefined(t, "scraper", Options{}), `{"website":"not a url"}`)
	e := asError[*RequestError](t, err)
	eq(t, "tool", e.Tool, ScraperName)
}

func TestBrowserless(t *testing.T) {
	page := `<html><body><h1>Rendered <i>by</i> JS</h1><p>Para one.</p><span>not collected</span><p>Para <b>two</b></p><script>var x = "no";</script></body></html>`
	srv := newFake(t, 200, "text/html", page)
	tool := predefined(t, "browserless", Options{BrowserlessURL: srv.URL, BrowserlessToken: "tok+en/1"})
	out := mustCall(t, tool, `{"website":"https://example.com/app"}`)
	// Text nodes of an element are concatenated, elements joined by a space.
	eq(t, "output", out, "Rendered by JS Para one. Para two")
	r := srv.only(t)
	eq(t, "method", r.Method, "POST")
	eq(t, "uri", r.URI, "/content?token=tok%2Ben%2F1")
	wantHeader(t, r, "Content-Type", "application/json")
	wantHeader(t, r, "Cache-Control", "no-cache")
	eq(t, "body", r.Body, `{"url":"https://example.com/app"}`)
}

func TestBrowserlessChunks(t *testing.T) {
	sentence := "The quick brown fox jumps over the lazy dog again and again. " // 61 characters
	var p strings.Builder
	for range 40 {
		p.WriteString(sentence)
	}
	srv := newFake(t, 200, "text/html", "<p>"+p.String()+"</p>")
	tool := predefined(t, "browserless", Options{BrowserlessURL: srv.URL, BrowserlessToken: "t"})
	out := mustCall(t, tool, `{"website":"https://example.com"}`)
	parts := strings.Split(out, "\n \n")
	// 40 sentences of 61 characters: 16 fit in 1000 (975 after trimming).
	one := strings.TrimSpace(strings.Repeat(sentence, 16))
	want := []string{one, one, strings.TrimSpace(strings.Repeat(sentence, 8))}
	if len(parts) != len(want) {
		t.Fatalf("got %d chunks, want %d:\n%q", len(parts), len(want), out)
	}
	for i := range want {
		eq(t, "chunk", parts[i], want[i])
		if n := utf8.RuneCountInString(parts[i]); n > 1000 {
			t.Errorf("chunk %d has %d characters", i, n)
		}
	}
}

func TestBrowserlessNeedsToken(t *testing.T) {
	srv := newFake(t, 200, "text/html", "<p>x</p>")
	_, err := call(t, predefined(t, "browserless", Options{BrowserlessURL: srv.URL}), `{"website":"https://example.com"}`)
	e := asError[*ConfigError](t, err)
	eq(t, "tool", e.Tool, BrowserlessName)
	eq(t, "message", err.Error(), `tool "browserless_web_scraper": BROWSERLESS_TOKEN is not set (Options.BrowserlessToken)`)
	eq(t, "requests", srv.count(), 0)
}

const ddgPage = `<!DOCTYPE html>
<html><head><title>go generics &amp; more at DuckDuckGo</title></head>
<body>
<div class="serp__results"><div id="links" class="results">
  <div class="result results_links results_links_deep result--ad ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a class="result__a" href="https://ad.example/">Buy Go Books</a></h2>
      <a class="result__url" href="https://ad.example/">ad.example</a>
      <a class="result__snippet" href="https://ad.example/">Sponsored.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fgo.dev%2Fdoc%2Ftutorial%2Fgenerics&amp;rut=abc">Tutorial: Getting started with <b>generics</b> - The Go Programming Language</a>
      </h2>
      <div class="result__extras">
        <div class="result__extras__url">
          <span class="result__icon"><a rel="nofollow" href="//duckduckgo.com/l/?uddg=x"><img class="result__icon__img" width="16" height="16" alt="" src="//external-content.duckduckgo.com/ip3/go.dev.ico" name="i15" /></a></span>
          <a class="result__url" href="//duckduckgo.com/l/?uddg=x">
            go.dev/doc/tutorial/generics
          </a>
        </div>
      </div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=x">This tutorial introduces the basics of <b>generics</b> in <b>Go</b>. You can declare &amp; use "functions"</a>
      <div class="clear"></div>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=y">An Introduction To Generics - The Go Programming Language</a></h2>
      <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=y">go.dev/blog/intro-generics</a></div></div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=y">The Go 1.18 release adds support for <b>generics</b>.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=z">A result without a snippet</a></h2>
      <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=z">example.com</a></div></div>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=w">Generics in Go: the <b>[T any]</b> syntax</a></h2>
      <div class="result__extras"><div class="result__extras__url"><a class="result__url" href="//duckduckgo.com/l/?uddg=w"> gobyexample.com/generics </a></div></div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=w">Starting with version 1.18, Go has added support for generics.</a>
    </div>
  </div>
</div></div>
</body></html>`

// The three complete results of ddgPage, in order.
const (
	ddgResult1 = `{"link":"go.dev/doc/tutorial/generics","snippet":"This tutorial introduces the basics of generics in Go. You can declare & use \"functions\"","title":"Tutorial: Getting started with generics - The Go Programming Language"}`
	ddgResult2 = `{"link":"go.dev/blog/intro-generics","snippet":"The Go 1.18 release adds support for generics.","title":"An Introduction To Generics - The Go Programming Language"}`
	ddgResult3 = `{"link":"gobyexample.com/generics","snippet":"Starting with version 1.18, Go has added support for generics.","title":"Generics in Go: the [T any] syntax"}`
)

func TestDuckDuckGo(t *testing.T) {
	srv := newFake(t, 200, "text/html; charset=UTF-8", ddgPage)
	tool := predefined(t, "duckduckgo", Options{DuckDuckGoURL: srv.URL + "/html/"})
	out := mustCall(t, tool, `{"query":"go generics & more/100%"}`)
	eq(t, "output", out, "["+ddgResult1+","+ddgResult2+","+ddgResult3+"]")
	r := srv.only(t)
	eq(t, "method", r.Method, "GET")
	eq(t, "uri", r.URI, "/html/?q=go+generics+%26+more%2F100%25")
}

func TestDuckDuckGoNoResults(t *testing.T) {
	srv := newFake(t, 202, "text/html", `<html><body><div class="anomaly-modal">Unfortunately, bots use DuckDuckGo too.</div></body></html>`)
	eq(t, "output", mustCall(t, predefined(t, "duckduckgo", Options{DuckDuckGoURL: srv.URL + "/html/"}), `{"query":"x"}`), "[]")
}

const financePage = `<!DOCTYPE html><html lang="en"><body><main>
<div class="Gfxi4">
  <div class="eYanAe">
    <div class="gyFHrc"><span class="iYuiXc" tabindex="0"><div class="mfs7Fc">Previous close</div><div class="EY8ABd-OWXEXe-TAWMXe" role="tooltip">The last closing price</div></span><div class="P6K39c">$189.98</div></div>
    <div class="gyFHrc"><span class="iYuiXc"><div class="mfs7Fc">Day range</div></span><div class="P6K39c">$187.45 - $190.12</div></div>
    <div class="gyFHrc"><span class="iYuiXc"><div class="mfs7Fc">Market cap</div></span><div class="P6K39c">2.93T <span class="cur">USD</span></div></div>
    <div class="gyFHrc"><span class="iYuiXc"><div class="mfs7Fc">Primary exchange</div></span></div>
    <section class="gyFHrc"><div class="mfs7Fc">Not a div row</div><div class="P6K39c">ignored</div></section>
    <div class="gyFHrc"><div class="mfs7Fc">P/E ratio</div><div class="P6K39c">29.52</div></div>
    <div class="gyFHrc"><div class="mfs7Fc">Day range</div><div class="P6K39c">later row wins</div></div>
  </div>
</div></main></body></html>`

func TestStock(t *testing.T) {
	srv := newFake(t, 200, "text/html; charset=utf-8", financePage)
	tool := predefined(t, "stock", Options{StockURL: srv.URL + "/finance/quote/"})
	out := mustCall(t, tool, `{"exchange":"NASDAQ","ticker":"AAPL"}`)
	eq(t, "output", out, `{"Day range":"later row wins","Market cap":"2.93T USD","P/E ratio":"29.52","Previous close":"$189.98"}`)
	r := srv.only(t)
	eq(t, "method", r.Method, "GET")
	eq(t, "uri", r.URI, "/finance/quote/AAPL:NASDAQ?hl=en")
}

func TestStockEscapesAndEmpty(t *testing.T) {
	srv := newFake(t, 200, "text/html", "<html><body>We couldn't find that quote</body></html>")
	tool := predefined(t, "stock", Options{StockURL: srv.URL + "/q/"})
	eq(t, "output", mustCall(t, tool, `{"exchange":"NYSE","ticker":"BRK B?"}`), "{}")
	eq(t, "uri", srv.only(t).URI, "/q/BRK%20B%3F:NYSE?hl=en")
}

package tools

import (
	"context"
	"testing"
)

func TestWebSearchSerper(t *testing.T) {
	response := `{"searchParameters":{"q":"q","type":"news"},
	  "news":[{"title":"a <b> & c","rating":4.50,"votes":1E3,"id":18446744073709551615,"neg":-0,"big":1e21,"small":0.00001,"tiny":1.5e-7,"line":"l\u2028s"}],
	  "organic":[],"credits":1}  `
	srv := newFake(t, 200, "application/json", response)
	out, err := WebSearch(context.Background(), SearchRequest{Query: "go 1.24", SearchType: "news", Lang: "fr", NResults: 20},
		Options{SerperURL: srv.URL, SerperKey: "serper-key"})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "output", out, `{"credits":1,"news":[{"big":1e21,"id":18446744073709551615,"line":"l`+"\u2028"+`s","neg":-0.0,"rating":4.5,"small":0.00001,"tiny":1.5e-7,"title":"a <b> & c","votes":1000.0}],"organic":[],"searchParameters":{"q":"q","type":"news"}}`)
	r := srv.only(t)
	eq(t, "method", r.Method, "POST")
	eq(t, "uri", r.URI, "/news")
	wantHeader(t, r, "X-API-KEY", "serper-key")
	wantHeader(t, r, "Content-Type", "application/json")
	eq(t, "body", r.Body, `{"gl":"fr","hl":"fr","num":10,"page":1,"q":"go 1.24"}`)
}

func TestWebSearchSerperBodies(t *testing.T) {
	cases := []struct {
		req       SearchRequest
		uri, body string
	}{
		{SearchRequest{Query: "q"}, "/search", `{"gl":"us","hl":"en","num":5,"page":1,"q":"q"}`},
		{SearchRequest{Query: "q", Lang: "en", NResults: 3}, "/search", `{"gl":"us","hl":"en","num":3,"page":1,"q":"q"}`},
		{SearchRequest{Query: "q", NResults: -1}, "/search", `{"gl":"us","hl":"en","num":5,"page":1,"q":"q"}`},
		{SearchRequest{Query: "q", SearchType: "scholar", Lang: "tr", NResults: 2}, "/scholar", `{"gl":"tr","hl":"tr","page":1,"q":"q"}`},
	}
	for _, c := range cases {
		srv := newFake(t, 200, "application/json", `{"organic":[]}`)
		out, err := WebSearch(context.Background(), c.req, Options{SerperURL: srv.URL, SerperKey: "k"})
		if err != nil {
			t.Fatalf("%+v: %v", c.req, err)
		}
		eq(t, "output", out, `{"organic":[]}`)
		r := srv.only(t)
		eq(t, "uri", r.URI, c.uri)
		eq(t, "body", r.Body, c.body)
	}
}

func TestWebSearchSerperErrors(t *testing.T) {
	srv := newFake(t, 200, "application/json", `{}`)
	_, err := WebSearch(context.Background(), SearchRequest{Query: "q", SearchType: "images"}, Options{SerperURL: srv.URL, SerperKey: "k"})
	e := asError[*ArgsError](t, err)
	eq(t, "tool", e.Tool, SearchSerperName)
	eq(t, "message", err.Error(), `tool "search/serper": argument "search_type": "images" is not search, scholar or news`)
	eq(t, "requests", srv.count(), 0)

	srv = newFake(t, 200, "text/html", `<html>`)
	_, err = WebSearch(context.Background(), SearchRequest{Query: "q"}, Options{SerperURL: srv.URL, SerperKey: "k"})
	asError[*ResponseError](t, err)
	eq(t, "message", err.Error(), `tool "search/serper": the response is not JSON: invalid character '<' looking for beginning of value`)

	srv = newFake(t, 200, "application/json", `{"a":1} {"b":2}`)
	_, err = WebSearch(context.Background(), SearchRequest{Query: "q"}, Options{SerperURL: srv.URL, SerperKey: "k"})
	asError[*ResponseError](t, err)

	srv = newFake(t, 401, "application/json", `{"message":"Unauthorized.","statusCode":401}`)
	_, err = WebSearch(context.Background(), SearchRequest{Query: "q"}, Options{SerperURL: srv.URL, SerperKey: "k"})
	s := asError[*StatusError](t, err)
	eq(t, "status", s.Status, 401)
	eq(t, "message", err.Error(), `tool "search/serper": HTTP status 401: {"message":"Unauthorized.","statusCode":401}`)
}

func TestWebSearchDuckDuckGo(t *testing.T) {
	cases := []struct {
		n    int
		want string
	}{
		{0, "[" + ddgResult1 + "," + ddgResult2 + "," + ddgResult3 + "]"},
		{2, "[" + ddgResult1 + "," + ddgResult2 + "]"},
		{3, "[" + ddgResult1 + "," + ddgResult2 + "," + ddgResult3 + "]"},
		{9, "[" + ddgResult1 + "," + ddgResult2 + "," + ddgResult3 + "]"},
	}
	for _, c := range cases {
		srv := newFake(t, 200, "text/html", ddgPage)
		// Without a Serper key (SerperKeySet alone is not enough) DuckDuckGo is used; type and lang are ignored.
		out, err := WebSearch(context.Background(), SearchRequest{Query: "rust vs go", SearchType: "images", Lang: "de", NResults: c.n},
			Options{DuckDuckGoURL: srv.URL + "/html/", SerperURL: "http://127.0.0.1:1", SerperKeySet: true})
		if err != nil {
			t.Fatal(err)
		}
		eq(t, "output", out, c.want)
		r := srv.only(t)
		eq(t, "method", r.Method, "GET")
		eq(t, "uri", r.URI, "/html/?q=rust+vs+go")
	}
}

package tools

import (
	"testing"
)

const serperSearchResponse = `{
  "searchParameters": {"q": "go generics", "gl": "us", "hl": "en", "type": "search", "num": 2, "page": 1, "engine": "google"},
  "organic": [
    {"title": "Tutorial: Getting started with generics", "link": "https://go.dev/doc/tutorial/generics",
     "snippet": "This tutorial introduces the basics of generics in Go.", "date": "Mar 15, 2022", "position": 1},
    {"title": "An Introduction To Generics", "link": "https://go.dev/blog/intro-generics",
     "snippet": "The Go 1.18 release adds support for generics.", "position": 2, "sitelinks": []},
    {"title": "Third", "link": "https://example.com", "snippet": "not taken", "position": 3}
  ],
  "credits": 1
}`

func TestSerperSearch(t *testing.T) {
	srv := newFake(t, 200, "application/json", serperSearchResponse)
	tool := predefined(t, "serper", Options{SerperURL: srv.URL, SerperKey: "serper-key"})
	out := mustCall(t, tool, `{"query":"go generics","n_results":2}`)
	want := "Tutorial: Getting started with generics\nhttps://go.dev/doc/tutorial/generics\nThis tutorial introduces the basics of generics in Go.\nMar 15, 2022\n1\n" +
		"An Introduction To Generics\nhttps://go.dev/blog/intro-generics\nThe Go 1.18 release adds support for generics.\nnone\n2"
	eq(t, "output", out, want)
	r := srv.only(t)
	eq(t, "method", r.Method, "POST")
	eq(t, "uri", r.URI, "/search")
	wantHeader(t, r, "X-API-KEY", "serper-key")
	wantHeader(t, r, "Content-Type", "application/json")
	eq(t, "body", r.Body, `{"gl":"us","hl":"en","num":2,"page":1,"q":"go generics"}`)
}

func TestSerperRequestBodies(t *testing.T) {
	cases := []struct {
		args, uri, body string
	}{
		// Defaults: search, en, 5.
		{`{"query":"q"}`, "/search", `{"gl":"us","hl":"en","num":5,"page":1,"q":"q"}`},
		// n_results is capped at 10; another language is also the country.
		{`{"query":"q","lang":"de","n_results":20}`, "/search", `{"gl":"de","hl":"de","num":10,"page":1,"q":"q"}`},
		// n_results must be an unsigned integer literal, else 5 (serde's as_u64).
		{`{"query":"q","n_results":3.0}`, "/search", `{"gl":"us","hl":"en","num":5,"page":1,"q":"q"}`},
		{`{"query":"q","n_results":"3"}`, "/search", `{"gl":"us","hl":"en","num":5,"page":1,"q":"q"}`},
		{`{"query":"q","n_results":-3}`, "/search", `{"gl":"us","hl":"en","num":5,"page":1,"q":"q"}`},
		{`{"query":"q","n_results":0}`, "/search", `{"gl":"us","hl":"en","num":0,"page":1,"q":"q"}`},
		// A non-string lang is "en".
		{`{"query":"q","lang":7}`, "/search", `{"gl":"us","hl":"en","num":5,"page":1,"q":"q"}`},
		// scholar drops num; news keeps it.
		{`{"query":"q","search_type":"scholar","n_results":3}`, "/scholar", `{"gl":"us","hl":"en","page":1,"q":"q"}`},
		{`{"query":"q","search_type":"news","lang":"fr"}`, "/news", `{"gl":"fr","hl":"fr","num":5,"page":1,"q":"q"}`},
	}
	for _, c := range cases {
		srv := newFake(t, 200, "application/json", `{"organic":[]}`)
		tool := predefined(t, "serper", Options{SerperURL: srv.URL, SerperKey: "k"})
		eq(t, c.args+" output", mustCall(t, tool, c.args), "")
		r := srv.only(t)
		eq(t, c.args+" uri", r.URI, c.uri)
		eq(t, c.args+" body", r.Body, c.body)
	}
}

func TestSerperScholarAndNews(t *testing.T) {
	scholar := `{"organic":[
	  {"title":"Featherweight Go","link":"https://arxiv.org/abs/2005.11710","publicationInfo":"R Griesemer, R Hu - OOPSLA, 2020","snippet":"We describe a design for generics in Go","year":2020,"citedBy":51},
	  {"title":"Untitled"},
	  "not an object"
	]}`
	srv := newFake(t, 200, "application/json", scholar)
	tool := predefined(t, "serper", Options{SerperURL: srv.URL, SerperKey: "k"})
	out := mustCall(t, tool, `{"query":"featherweight go","search_type":"scholar"}`)
	eq(t, "scholar", out, "Featherweight Go\nhttps://arxiv.org/abs/2005.11710\nR Griesemer, R Hu - OOPSLA, 2020\nWe describe a design for generics in Go\n2020\n51\n"+
		"Untitled\nnone\nnone\nnone\n-1\n-1\n"+
		"none\nnone\nnone\nnone\n-1\n-1")

	news := `{"organic":[{"title":"Go 1.24 is released","link":"https://go.dev/blog/go1.24","snippet":"Today the Go team is happy to release Go 1.24","date":"2 days ago","source":"The Go Blog","imageUrl":"https://go.dev/img.png","position":1}]}`
	srv = newFake(t, 200, "application/json", news)
	tool = predefined(t, "serper", Options{SerperURL: srv.URL, SerperKey: "k"})
	out = mustCall(t, tool, `{"query":"go release","search_type":"news","n_results":1}`)
	eq(t, "news", out, "Go 1.24 is released\nhttps://go.dev/blog/go1.24\nToday the Go team is happy to release Go 1.24\n2 days ago\nThe Go Blog\nhttps://go.dev/img.png\n1")
}

func TestSerperEmptyKeyPresent(t *testing.T) {
	// SERPER_API_KEY present but empty: the reference sends it empty.
	srv := newFake(t, 200, "application/json", `{"organic":[]}`)
	tool := predefined(t, "serper", Options{SerperURL: srv.URL, SerperKeySet: true})
	eq(t, "output", mustCall(t, tool, `{"query":"q"}`), "")
	wantHeader(t, srv.only(t), "X-API-KEY", "")
}

func TestSerperErrors(t *testing.T) {
	cases := []struct {
		name            string
		status          int
		body, args, msg string
		check           func(t *testing.T, err error)
	}{
		{"no organic", 200, `{"answerBox":{"answer":"42"}}`, `{"query":"q"}`,
			`tool "google_search_tool": Invalid response format: no "organic" list`,
			func(t *testing.T, err error) { asError[*ResponseError](t, err) }},
		{"organic not a list", 200, `{"organic":{}}`, `{"query":"q"}`,
			`tool "google_search_tool": Invalid response format: no "organic" list`,
			func(t *testing.T, err error) { asError[*ResponseError](t, err) }},
		{"not JSON", 200, `<html>rate limited</html>`, `{"query":"q"}`,
			`tool "google_search_tool": the response is not JSON: invalid character '<' looking for beginning of value`,
			func(t *testing.T, err error) { asError[*ResponseError](t, err) }},
		{"title not a string", 200, `{"organic":[{"title":null,"link":"l"}]}`, `{"query":"q"}`,
			`tool "google_search_tool": organic result field "title" is not a string`,
			func(t *testing.T, err error) { asError[*ResponseError](t, err) }},
		{"position not an integer", 200, `{"organic":[{"title":"t","position":1.5}]}`, `{"query":"q"}`,
			`tool "google_search_tool": organic result field "position" is not an integer`,
			func(t *testing.T, err error) { asError[*ResponseError](t, err) }},
		{"forbidden", 403, `{"message":"Unauthorized.","statusCode":403}`, `{"query":"q"}`,
			`tool "google_search_tool": HTTP status 403: {"message":"Unauthorized.","statusCode":403}`,
			func(t *testing.T, err error) {
				e := asError[*StatusError](t, err)
				eq(t, "status", e.Status, 403)
			}},
	}
	for _, c := range cases {
		srv := newFake(t, c.status, "application/json", c.body)
		_, err := call(t, predefined(t, "serper", Options{SerperURL: srv.URL, SerperKey: "k"}), c.args)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		c.check(t, err)
		eq(t, c.name, err.Error(), c.msg)
		eq(t, c.name+" requests", srv.count(), 1)
	}
}

func TestSerperRefusesBeforeSending(t *testing.T) {
	srv := newFake(t, 200, "application/json", `{"organic":[]}`)
	_, err := call(t, predefined(t, "serper", Options{SerperURL: srv.URL, SerperKey: "k"}), `{"query":"q","search_type":"images"}`)
	e := asError[*ArgsError](t, err)
	eq(t, "arg", e.Arg, "search_type")
	eq(t, "message", err.Error(), `tool "google_search_tool": argument "search_type": "images" is not search, scholar or news`)

	_, err = call(t, predefined(t, "serper", Options{SerperURL: srv.URL}), `{"query":"q"}`)
	c := asError[*ConfigError](t, err)
	eq(t, "tool", c.Tool, SerperName)
	eq(t, "message", err.Error(), `tool "google_search_tool": SERPER_API_KEY is not set (Options.SerperKey)`)
	eq(t, "requests", srv.count(), 0)
}

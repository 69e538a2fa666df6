package tools

import (
	"strings"

	"golang.org/x/net/html"
)

// This file holds the bits of CSS selection the reference's scrapers use
// (the scraper crate's Selector): element names, classes, descendants in
// document order, and the text of an element.

// parseHTML parses a document as a browser (and html5ever) does; it never
// fails on text.
func parseHTML(s string) *html.Node {
	doc, err := html.Parse(strings.NewReader(s))
	if err != nil {
		// html.Parse fails only when its reader does.
		return &html.Node{Type: html.DocumentNode}
	}
	return doc
}

// matcher tests an element.
type matcher func(*html.Node) bool

// class matches elements whose class attribute holds c.
func class(c string) matcher {
	return func(n *html.Node) bool {
		for _, a := range n.Attr {
			if a.Namespace == "" && a.Key == "class" {
				for _, f := range strings.Fields(a.Val) {
					if f == c {
						return true
					}
				}
			}
		}
		return false
	}
}

// tag matches HTML elements of one of the names.
func tag(names ...string) matcher {
	return func(n *html.Node) bool {
		if n.Namespace != "" {
			return false
		}
		for _, name := range names {
			if n.Data == name {
				return true
			}
		}
		return false
	}
}

// and matches elements both matchers match.
func and(a, b matcher) matcher {
	return func(n *html.Node) bool { return a(n) && b(n) }
}

// selectAll returns the elements under root (root included) that m
// matches, in document order.
func selectAll(root *html.Node, m matcher) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && m(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// selectFirst returns the first element under root that m matches, or nil.
func selectFirst(root *html.Node, m matcher) *html.Node {
	var found *html.Node
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		if n.Type == html.ElementNode && m(n) {
			found = n
			return true
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c) {
				return true
			}
		}
		return false
	}
	walk(root)
	return found
}

// text returns the text nodes under n, in document order, joined by sep
// (the scraper crate's ElementRef::text, collected).
func text(n *html.Node, sep string) string {
	var parts []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			parts = append(parts, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(parts, sep)
}

// pageText is the text of every p and h1-h6 element in document order,
// each element's text nodes joined by inner, the elements joined by " ".
func pageText(doc *html.Node, inner string) string {
	els := selectAll(doc, tag("p", "h1", "h2", "h3", "h4", "h5", "h6"))
	parts := make([]string, len(els))
	for i, el := range els {
		parts[i] = text(el, inner)
	}
	return strings.Join(parts, " ")
}

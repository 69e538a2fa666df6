package mcp

import (
	"encoding/base64"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxInline is how many bytes of binary content (an image, audio, a
// blob resource) a result carries inline, base64-encoded, when
// Config.MaxInline is 0.
const DefaultMaxInline = 32 << 10

// Result is what a tool call gives the model, when its result is more than
// text: a tool result reaches the model as JSON text (llm.Message carries
// no binary parts), so images and audio are written as base64 data up to a
// bound, and as a placeholder beyond it.
//
// A result made only of text blocks, without structured content, is not a
// Result but a JSON string: the texts joined by newlines.
type Result struct {
	// Text is the text blocks, joined by newlines.
	Text string `json:"text,omitempty"`
	// Structured is the result's structuredContent, as the server sent it.
	Structured any `json:"structured,omitempty"`
	// Content is the blocks other than text, in order.
	Content []Block `json:"content,omitempty"`
}

// Block is one non-text content block of a result.
type Block struct {
	// Type is "image", "audio", "resource_link" or "resource".
	Type     string `json:"type"`
	MIMEType string `json:"mime_type,omitempty"`
	// URI, Name, Title and Description describe a resource link or an
	// embedded resource.
	URI         string `json:"uri,omitempty"`
	Name        string `json:"name,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Text is an embedded text resource's text.
	Text string `json:"text,omitempty"`
	// Size is the number of bytes of binary data (an image, audio, a
	// blob), or a linked resource's size when the server gives it.
	Size int64 `json:"size,omitempty"`
	// Data is the binary data, base64-encoded, when it is at most the
	// inline bound; else it is empty and Omitted says so.
	Data    string `json:"data,omitempty"`
	Omitted string `json:"omitted,omitempty"`
}

// resultValue maps a CallToolResult (not an error) to the value the tool
// returns: a string for text only, else a Result.
func resultValue(res *sdk.CallToolResult, maxInline int) any {
	var texts []string
	var blocks []Block
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			texts = append(texts, c.Text)
		case *sdk.ImageContent:
			blocks = append(blocks, binary("image", c.MIMEType, c.Data, maxInline))
		case *sdk.AudioContent:
			blocks = append(blocks, binary("audio", c.MIMEType, c.Data, maxInline))
		case *sdk.ResourceLink:
			b := Block{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType}
			if c.Size != nil {
				b.Size = *c.Size
			}
			blocks = append(blocks, b)
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			r := c.Resource
			b := Block{Type: "resource", URI: r.URI, MIMEType: r.MIMEType, Text: r.Text}
			if r.Blob != nil {
				bin := binary("resource", r.MIMEType, r.Blob, maxInline)
				b.Size, b.Data, b.Omitted = bin.Size, bin.Data, bin.Omitted
			}
			blocks = append(blocks, b)
		default:
			// A type this client does not know: say so rather than drop it.
			blocks = append(blocks, Block{Type: fmt.Sprintf("%T", c), Omitted: "a content type weft does not map"})
		}
	}
	text := strings.Join(texts, "\n")
	if res.StructuredContent == nil && len(blocks) == 0 {
		return text
	}
	return Result{Text: text, Structured: res.StructuredContent, Content: blocks}
}

// binary makes the block of binary data, inline when small enough.
func binary(typ, mime string, data []byte, maxInline int) Block {
	b := Block{Type: typ, MIMEType: mime, Size: int64(len(data))}
	if maxInline >= 0 && len(data) <= maxInline {
		b.Data = base64.StdEncoding.EncodeToString(data)
	} else {
		b.Omitted = fmt.Sprintf("%d bytes of %s not included (the bound is %d bytes)", len(data), typ, max(maxInline, 0))
	}
	return b
}

// errorText is the text of an isError result: its text blocks, or a note
// when it has none.
func errorText(res *sdk.CallToolResult) string {
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	if len(texts) == 0 {
		return "the tool reported an error without a message"
	}
	return strings.Join(texts, "\n")
}

package llmtest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/weftlang/weft/llm"
)

func TestBagOfWords(t *testing.T) {
	a := HashEmbed("The cat sat on the mat.")
	if len(a) != EmbedDims {
		t.Fatalf("len = %d, want %d", len(a), EmbedDims)
	}
	var norm float64
	for _, x := range a {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-6 {
		t.Errorf("squared norm = %v, want 1", norm)
	}
	if !reflect.DeepEqual(a, HashEmbed("the CAT sat, on the mat")) {
		t.Errorf("case and punctuation change the vector")
	}
	if cos := llm.Cosine(a, HashEmbed("The cat sat on the mat.")); math.Abs(cos-1) > 1e-6 {
		t.Errorf("cosine of identical texts = %v", cos)
	}
	near := llm.Cosine(a, HashEmbed("a cat on a mat"))
	far := llm.Cosine(a, HashEmbed("quarterly revenue grew eleven percent"))
	if !(near > 0.4 && far < near) {
		t.Errorf("shared words %v, unrelated %v", near, far)
	}
	// Words repeat: "the" counts twice.
	if x := BagOfWords("the the", 8); !reflect.DeepEqual(x, BagOfWords("the", 8)) {
		t.Errorf("a repeated word changes the direction: %v vs %v", x, BagOfWords("the", 8))
	}
	for _, empty := range []string{"", "  ...  "} {
		v := BagOfWords(empty, 16)
		if len(v) != 16 || llm.Cosine(v, v) < 0.999 {
			t.Errorf("BagOfWords(%q) = %v, want a unit vector", empty, v)
		}
	}
	if len(BagOfWords("x", 0)) != EmbedDims {
		t.Errorf("dims 0 does not mean EmbedDims")
	}
}

func TestCosine(t *testing.T) {
	cases := []struct {
		a, b []float32
		want float64
	}{
		{[]float32{1, 0}, []float32{2, 0}, 1},
		{[]float32{1, 0}, []float32{0, 3}, 0},
		{[]float32{1, 0}, []float32{-1, 0}, -1},
		{[]float32{1, 0}, []float32{1}, 0},
		{[]float32{0, 0}, []float32{1, 0}, 0},
		{nil, nil, 0},
	}
	for _, c := range cases {
		if got := llm.Cosine(c.a, c.b); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("Cosine(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// post sends a raw body and returns the status and reply body.
func post(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestEmbedWireFormats pins the fakes' embedding replies, read raw.
func TestEmbedWireFormats(t *testing.T) {
	ol := NewOllamaServer()
	defer ol.Close()
	code, b := post(t, ol.URL+"/api/embed", `{"model":"m","input":"hello world"}`)
	var or struct {
		Model           string      `json:"model"`
		Embeddings      [][]float32 `json:"embeddings"`
		PromptEvalCount int         `json:"prompt_eval_count"`
	}
	if code != 200 || json.Unmarshal(b, &or) != nil || or.Model != "m" || len(or.Embeddings) != 1 ||
		!reflect.DeepEqual(or.Embeddings[0], HashEmbed("hello world")) || or.PromptEvalCount == 0 {
		t.Errorf("ollama: %d %s", code, b)
	}
	code, b = post(t, ol.URL+"/api/embed", `{"model":"m","input":[]}`)
	if code != 200 || !strings.Contains(string(b), `"embeddings":[]`) {
		t.Errorf("ollama, empty input: %d %s", code, b)
	}
	if code, b = post(t, ol.URL+"/api/embed", `{"input":["x"]}`); code != 400 || !strings.Contains(string(b), "model is required") {
		t.Errorf("ollama, no model: %d %s", code, b)
	}
	if code, _ = post(t, ol.URL+"/api/embeddings", `{"model":"m","prompt":"x"}`); code != 404 {
		t.Errorf("ollama, legacy /api/embeddings: %d, want 404", code)
	}
	if n := len(ol.EmbedRequests()); n != 2 || len(ol.Requests()) != 2 {
		t.Errorf("recorded %d embedding requests, %d in all; want 2", n, len(ol.Requests()))
	}

	oa := NewOpenAIServer()
	defer oa.Close()
	oa.PushEmbed(Reply{Shuffle: true, Model: "served"})
	code, b = post(t, oa.URL+"/v1/embeddings", `{"model":"m","input":["a","b c"],"encoding_format":"float"}`)
	var ar struct {
		Object string `json:"object"`
		Data   []struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Model string `json:"model"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			TotalTokens  int `json:"total_tokens"`
		} `json:"usage"`
	}
	if code != 200 || json.Unmarshal(b, &ar) != nil || ar.Object != "list" || ar.Model != "served" || len(ar.Data) != 2 ||
		ar.Data[0].Index != 1 || ar.Data[0].Object != "embedding" || !reflect.DeepEqual(ar.Data[0].Embedding, HashEmbed("b c")) ||
		ar.Usage.PromptTokens == 0 || ar.Usage.TotalTokens != ar.Usage.PromptTokens {
		t.Errorf("openai: %d %s", code, b)
	}
	code, b = post(t, oa.URL+"/v1/embeddings", `{"model":"m","input":"hello world","encoding_format":"base64"}`)
	var br struct {
		Data []struct {
			Embedding string `json:"embedding"`
		} `json:"data"`
	}
	if code != 200 || json.Unmarshal(b, &br) != nil || len(br.Data) != 1 {
		t.Fatalf("openai base64: %d %s", code, b)
	}
	raw, err := base64.StdEncoding.DecodeString(br.Data[0].Embedding)
	if err != nil || len(raw) != 4*EmbedDims {
		t.Fatalf("base64: %d bytes, %v", len(raw), err)
	}
	want := HashEmbed("hello world")
	for i := range want {
		if math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])) != want[i] {
			t.Fatalf("base64 dimension %d differs", i)
		}
	}
	for _, bad := range []string{`{"model":"m","input":[]}`, `{"model":"m"}`, `{"input":["x"]}`, `{"model":"m","input":[1,2]}`, `{"model":"m","input":"x","encoding_format":"int8"}`} {
		if code, b := post(t, oa.URL+"/v1/embeddings", bad); code != 400 || !strings.Contains(string(b), `"invalid_request_error"`) {
			t.Errorf("openai %s: %d %s", bad, code, b)
		}
	}

	an := NewAnthropicServer()
	defer an.Close()
	if code, _ = post(t, an.URL+"/v1/embeddings", `{"model":"m","input":["x"]}`); code != 404 {
		t.Errorf("anthropic /v1/embeddings: %d, want 404", code)
	}
}

func TestSetEmbed(t *testing.T) {
	s := NewOllamaServer(Text("chat reply"))
	defer s.Close()
	s.SetEmbed(func(text string) []float32 { return []float32{float32(len(text)), 0} })
	if _, b := post(t, s.URL+"/api/embed", `{"model":"m","input":["abc","de"]}`); !strings.Contains(string(b), `"embeddings":[[3,0],[2,0]]`) {
		t.Errorf("scripted vectors: %s", b)
	}
	s.SetEmbed(nil)
	if _, b := post(t, s.URL+"/api/embed", `{"model":"m","input":["abc"]}`); strings.Contains(string(b), `[[3,0]]`) {
		t.Errorf("SetEmbed(nil) kept the function: %s", b)
	}
	// The chat script is untouched by embedding requests.
	if code, b := post(t, s.URL+"/api/chat", `{"model":"m","stream":false,"messages":[{"role":"user","content":"x"}]}`); code != 200 || !strings.Contains(string(b), "chat reply") {
		t.Errorf("chat after embeddings: %d %s", code, b)
	}
	recs := s.Requests()
	if len(recs) != 3 || recs[0].Embed == nil || recs[2].Embed != nil || recs[2].Request.Model != "m" {
		t.Errorf("records: %d", len(recs))
	}
}

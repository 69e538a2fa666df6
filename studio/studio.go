// Package studio is weft's web UI: served workflows with their graphs
// and sources, threads, runs followed live, their history and state, the
// questions runs ask people, time travel. `weft serve` serves it under
// /studio/.
//
// Pages are Go templates rendered on the server: every list and history
// reads without JavaScript. A little plain JavaScript (assets/studio.js,
// no library, no build step) follows runs live and sends actions. The
// studio reads and acts only through the LangGraph Server API it is given
// (Options.API, called in-process), and the browser reaches that API only
// through the studio (under /studio/api/), which adds the API key: the key
// never reaches the browser, which holds a session cookie instead.
package studio

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/weftlang/weft/server"
)

//go:embed assets
var assets embed.FS

// Options configure a Studio.
type Options struct {
	// API is the LangGraph Server API the studio reads and acts through
	// (server.Server.Handler), called in-process. Required.
	API http.Handler
	// APIKey is the API's key, if it has one: the studio sends it, and
	// asks a browser for it once (a session cookie keeps it).
	APIKey string
	// Assistants are the workflows the API serves, for their graphs and
	// sources.
	Assistants []server.Assistant
	// Prefix is the path the studio is served under; "" is "/studio/".
	Prefix string
	// Logger logs the studio's failures; nil discards.
	Logger *slog.Logger
}

// Studio is the UI's http.Handler.
type Studio struct {
	opts   Options
	prefix string
	pages  map[string]*template.Template
	mux    *http.ServeMux
	log    *slog.Logger
	flows  []*flowPage // in the order served
}

// New builds a Studio.
func New(opts Options) (*Studio, error) {
	if opts.API == nil {
		return nil, errors.New("studio: Options.API is required")
	}
	s := &Studio{opts: opts, prefix: opts.Prefix, log: opts.Logger, mux: http.NewServeMux()}
	if s.prefix == "" {
		s.prefix = "/studio/"
	}
	if !strings.HasPrefix(s.prefix, "/") || !strings.HasSuffix(s.prefix, "/") {
		return nil, fmt.Errorf("studio: prefix %q: want a path that starts and ends with /", s.prefix)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if err := s.parse(); err != nil {
		return nil, err
	}
	for i := range opts.Assistants {
		fp, err := newFlowPage(&opts.Assistants[i])
		if err != nil {
			return nil, err
		}
		s.flows = append(s.flows, fp)
	}
	s.routes()
	return s, nil
}

// parse parses each page's template with the layout.
func (s *Studio) parse() error {
	funcs := template.FuncMap{"path": func(p string) string { return s.prefix + strings.TrimPrefix(p, "/") }}
	names, err := fs.Glob(assets, "assets/*.html")
	if err != nil {
		return err
	}
	s.pages = map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "assets/"), ".html")
		if base == "layout" || base == "live" {
			continue
		}
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(assets, "assets/layout.html", "assets/live.html", n)
		if err != nil {
			return fmt.Errorf("studio: %w", err)
		}
		s.pages[base] = t
	}
	return nil
}

func (s *Studio) routes() {
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET "+s.prefix+"assets/", http.StripPrefix(s.prefix+"assets/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET "+s.prefix+"login", s.loginPage)
	s.mux.HandleFunc("POST "+s.prefix+"login", s.login)
	s.mux.Handle(s.prefix+"api/", s.authed(http.HandlerFunc(s.proxy)))
	s.mux.Handle("GET "+s.prefix+"{$}", s.authed(s.page(s.home)))
	s.mux.Handle("GET "+s.prefix+"workflows/{name}", s.authed(s.page(s.workflow)))
	s.mux.Handle("POST "+s.prefix+"workflows/{name}/run", s.authed(http.HandlerFunc(s.startRun)))
	s.mux.Handle("GET "+s.prefix+"threads", s.authed(http.HandlerFunc(s.threadsList)))
	s.mux.Handle("GET "+s.prefix+"threads/{id}", s.authed(http.HandlerFunc(s.threadPage)))
	s.mux.Handle("POST "+s.prefix+"threads/{id}/answer", s.authed(http.HandlerFunc(s.answer)))
	s.mux.Handle("POST "+s.prefix+"threads/{id}/fork", s.authed(http.HandlerFunc(s.fork)))
	s.mux.Handle("POST "+s.prefix+"threads/{id}/cancel", s.authed(http.HandlerFunc(s.cancel)))
	s.viewRoutes()
}

// ServeHTTP serves the studio's pages, assets and API proxy.
func (s *Studio) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Prefix is the path the studio is served under.
func (s *Studio) Prefix() string { return s.prefix }

// pageFunc renders a page's data, or fails with an error the page shows.
type pageFunc func(r *http.Request) (name string, data any, err error)

// page serves a pageFunc: its template in the layout, or an error page.
func (s *Studio) page(f pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, data, err := f(r)
		status := http.StatusOK
		if err != nil {
			var he *httpError
			status = http.StatusInternalServerError
			if errors.As(err, &he) {
				status = he.status
			} else {
				s.log.Error("studio: a page failed", "path", r.URL.Path, "err", err)
			}
			name, data = "error", map[string]any{"Title": http.StatusText(status), "Status": status, "Message": err.Error()}
		}
		s.render(w, status, name, data)
	})
}

// render writes page name with data, with status.
func (s *Studio) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages[name].Execute(&buf, data); err != nil {
		s.log.Error("studio: rendering a page", "page", name, "err", err)
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// httpError is a page's failure with its HTTP status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// notFound is a page's 404.
func notFound(format string, args ...any) error {
	return &httpError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// call calls the API in-process with the key: the status and the body.
func (s *Studio) call(ctx context.Context, method, path string, body any) (int, []byte, error) {
	rec, err := s.do(ctx, method, path, body)
	if err != nil {
		return 0, nil, err
	}
	return rec.Code, rec.Body.Bytes(), nil
}

// do serves one call of the API in-process: its whole answer (status,
// headers, body).
func (s *Studio) do(ctx context.Context, method, path string, body any) (*httptest.ResponseRecorder, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	// (httptest's request panics on a bad path: this one says so.)
	req, err := http.NewRequestWithContext(ctx, method, path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if s.opts.APIKey != "" {
		req.Header.Set("X-Api-Key", s.opts.APIKey)
	}
	rec := httptest.NewRecorder()
	s.opts.API.ServeHTTP(rec, req)
	return rec, nil
}

// get reads a JSON answer of the API into v; a status other than 200 is
// an error that names the call.
func (s *Studio) get(ctx context.Context, method, path string, body, v any) error {
	code, b, err := s.call(ctx, method, path, body)
	if err != nil {
		return err
	}
	if code == http.StatusNotFound {
		return notFound("%s %s: not found", method, path)
	}
	if code != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, code, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// proxy forwards /studio/api/... to the API, with the key: the browser's
// live streams and actions.
func (s *Studio) proxy(w http.ResponseWriter, r *http.Request) {
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + strings.TrimPrefix(r.URL.Path, s.prefix+"api/")
	r2.URL.RawPath = ""
	r2.RequestURI = ""
	r2.Header.Del("Cookie")
	if s.opts.APIKey != "" {
		r2.Header.Set("X-Api-Key", s.opts.APIKey)
	}
	s.opts.API.ServeHTTP(w, r2)
}

// sessionCookie names the cookie that says a browser gave the API key.
const sessionCookie = "weft_studio"

// session is the cookie's value for the key: an HMAC of a fixed text
// under the key, so the cookie never holds the key itself.
func (s *Studio) session() string {
	m := hmac.New(sha256.New, []byte(s.opts.APIKey))
	m.Write([]byte("weft studio session"))
	return hex.EncodeToString(m.Sum(nil))
}

// authed lets a request through when the API has no key or the browser's
// session cookie is right; else pages go to the login form and API calls
// get 401.
func (s *Studio) authed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.APIKey == "" {
			next.ServeHTTP(w, r)
			return
		}
		if c, err := r.Cookie(sessionCookie); err == nil && hmac.Equal([]byte(c.Value), []byte(s.session())) {
			next.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, s.prefix+"api/") {
			http.Error(w, "sign in to the studio first", http.StatusUnauthorized)
			return
		}
		http.Redirect(w, r, s.prefix+"login", http.StatusSeeOther)
	})
}

func (s *Studio) loginPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "login", map[string]any{"Title": "Sign in"})
}

func (s *Studio) login(w http.ResponseWriter, r *http.Request) {
	if s.opts.APIKey == "" || !hmac.Equal([]byte(r.PostFormValue("key")), []byte(s.opts.APIKey)) {
		s.render(w, http.StatusUnauthorized, "login", map[string]any{"Title": "Sign in", "Error": "That is not the server's API key."})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.session(), Path: s.prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, s.prefix, http.StatusSeeOther)
}

// routes of the thread view: a step's page, and a new run on a thread.
func (s *Studio) viewRoutes() {
	s.mux.Handle("GET "+s.prefix+"threads/{id}/steps/{cp}", s.authed(s.page(s.stepPage)))
	s.mux.Handle("POST "+s.prefix+"threads/{id}/run", s.authed(http.HandlerFunc(s.runOn)))
}

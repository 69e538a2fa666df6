// Package redact keeps credentials out of the texts weft shows: it
// replaces the API keys, URL passwords, secret query values and
// credential headers a client was configured with, in the forms they may be
// echoed in, and any Bearer token, by a marker. Errors keep what
// errors.Is and errors.As find.
package redact

import (
	"cmp"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces a credential in an error's text.
const Redacted = "[REDACTED]"

// minSecret is the shortest credential redacted wherever it occurs in a
// text: a shorter one would match ordinary words. The Bearer form is
// redacted whatever its length.
const minSecret = 4

// bearer matches an Authorization value of the Bearer scheme, whether or
// not its token is a configured credential: a proxy quoting the header of
// another client leaks a key all the same. The token must hold a digit,
// so that prose such as "Bearer authentication" is left alone.
var bearer = regexp.MustCompile(`(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/-]*[0-9][A-Za-z0-9._~+/-]*=*`)

// Redactor removes a client's credentials from the errors it returns:
// the API key, the password of the base URL (and its user information
// where a URL shows it), the values of its
// query parameters that name a secret, and the values of the configured
// headers that carry credentials, in the forms they may be echoed in
// (as given, URL-escaped, and as a Basic authorization). Any Bearer token
// is redacted too. A nil *Redactor redacts only Bearer tokens.
type Redactor struct {
	rep *strings.Replacer // nil: no credential configured
}

// New returns the Redactor of a client configured with baseURL, apiKey
// and the extra headers header.
func New(baseURL, apiKey string, header http.Header) *Redactor {
	var b builder
	b.secret(apiKey)
	b.url(baseURL)
	b.header(header)
	return b.build()
}

// Of returns the Redactor of several configurations at once: the
// credentials in each of urls (user, password, secret query values) and
// each of keys (API keys, tokens). Empty entries are skipped.
func Of(urls, keys []string) *Redactor {
	var b builder
	for _, u := range urls {
		b.url(u)
	}
	for _, k := range keys {
		b.secret(k)
	}
	return b.build()
}

// builder gathers the replacements of a Redactor.
type builder struct {
	pairs [][2]string // old, new
}

// secret adds a credential, in the forms it may be echoed in.
func (b *builder) secret(s string) {
	s = strings.TrimSpace(s)
	if len(s) < minSecret {
		return
	}
	for _, f := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
		b.pairs = append(b.pairs, [2]string{f, Redacted})
	}
}

// url adds the credentials of a URL: its user information as a URL shows
// it (the whole of it goes, so that a URL names no one), its password
// wherever it stands, and its secret query values. The user name alone is
// not a secret: redacting it everywhere would turn the user "postgres"
// into "[REDACTED]://" in every error that names a postgres:// URL.
func (b *builder) url(raw string) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return
	}
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if ui := u.User; ui != nil {
		user := ui.Username()
		pass, hasPass := ui.Password()
		// A URL printed by net/http has its password as "***".
		b.pairs = append(b.pairs, [2]string{ui.String() + "@", ""})
		if hasPass {
			b.pairs = append(b.pairs, [2]string{user + ":***@", ""}) // as net/http writes it
			b.secret(pass)
			b.secret(base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)))
		}
	}
	for name, vals := range u.Query() {
		if SecretName(name) {
			for _, v := range vals {
				b.secret(v)
			}
		}
	}
}

// header adds the values of the headers that carry credentials, and the
// token of a "Scheme token" value.
func (b *builder) header(h http.Header) {
	for name, vals := range h {
		if !SecretName(name) {
			continue
		}
		for _, v := range vals {
			b.secret(v)
			if scheme, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok && scheme != "" {
				b.secret(tok)
			}
		}
	}
}

func (b *builder) build() *Redactor {
	if len(b.pairs) == 0 {
		return &Redactor{}
	}
	// Longest first, so that a secret holding another is replaced whole.
	slices.SortStableFunc(b.pairs, func(x, y [2]string) int { return cmp.Compare(len(y[0]), len(x[0])) })
	args := make([]string, 0, 2*len(b.pairs))
	for _, p := range b.pairs {
		args = append(args, p[0], p[1])
	}
	return &Redactor{rep: strings.NewReplacer(args...)}
}

// SecretName reports whether a header or query parameter of that name
// carries a credential: Authorization, Proxy-Authorization, Cookie, and
// any name holding "key", "token", "secret", "pass", "auth", "sig" or
// "credential" (x-api-key, api_key, access_token, sig, ...).
func SecretName(name string) bool {
	n := strings.ToLower(name)
	if n == "cookie" {
		return true
	}
	for _, w := range []string{"key", "token", "secret", "pass", "auth", "sig", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// String returns s with every credential replaced by Redacted.
func (r *Redactor) String(s string) string {
	if r != nil && r.rep != nil {
		s = r.rep.Replace(s)
	}
	if strings.Contains(strings.ToLower(s), "bearer") {
		s = bearer.ReplaceAllString(s, "${1}${2}"+Redacted)
	}
	return s
}

// Error returns err with its text redacted: err itself if its text holds
// no credential, and otherwise an error whose text is redacted and which
// wraps err, so that errors.Is and errors.As still find it and the errors
// it wraps (whose own texts are not redacted).
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	return r.wrap(err)
}

func (r *Redactor) wrap(err error) error {
	s := err.Error()
	red := r.String(s)
	if red == s {
		return err
	}
	return &redactedError{msg: red, err: err}
}

// redactedError is an error whose text had credentials in it.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// SafeURL returns u as text without its user information and with the
// values of its query parameters that name a secret (see SecretName)
// replaced by Redacted, for error messages.
func SafeURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	c.User = nil
	if c.RawQuery != "" {
		q := c.Query()
		changed := false
		for name, vals := range q {
			if SecretName(name) {
				for i := range vals {
					vals[i] = Redacted
				}
				changed = true
			}
		}
		if changed {
			c.RawQuery = q.Encode()
		}
	}
	return c.String()
}

// DSN returns a connection string (postgres://user:pass@host/db, an
// Elasticsearch URL with credentials) with its password replaced by
// "xxxxx"; a string without user information, or that is not a URL, is
// returned as is.
func DSN(dsn string) string {
	at := strings.LastIndex(dsn, "@")
	scheme := strings.Index(dsn, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return dsn
	}
	if user, _, ok := strings.Cut(dsn[scheme+3:at], ":"); ok {
		return dsn[:scheme+3] + user + ":xxxxx" + dsn[at:]
	}
	return dsn
}

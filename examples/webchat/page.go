package main

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
)

// webDist is the built React page (web/dist, made by `npm ci && npm run
// build` in web/). It is committed, so the server builds with only Go.
// Next to each built script and style sheet the build leaves a brotli
// (.br) and a gzip (.gz) copy, compressed once at the best level.
//
//go:embed web/dist
var webDist embed.FS

// contentSecurityPolicy is the page's policy: scripts, styles, fonts and
// requests from its own origin only, no plugins, no <base>, forms posting
// only to itself, and no other page may frame it (clickjacking). The
// favicon is a data: URL, hence img-src data:.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Cache lifetimes: the files under /assets/ have a hash of their content in
// their names, so a new build gets new names and the old ones never change;
// index.html keeps its name and is checked again on every load (no-cache
// with an ETag: a 304 when it did not change).
const (
	assetCacheControl = "public, max-age=31536000, immutable"
	indexCacheControl = "no-cache"
)

// setPageSecurityHeaders sets the headers every response of the page
// carries: its Content-Security-Policy, nosniff (a response is only ever
// what its Content-Type says) and, for browsers older than frame-ancestors,
// X-Frame-Options.
func setPageSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

// pageHandler serves the embedded page: index.html at / and its assets
// under /assets/, each in the precompressed encoding the request accepts
// (brotli, then gzip, else as built). Other paths are 404.
func pageHandler() http.Handler {
	dist, err := fs.Sub(webDist, "web/dist")
	if err != nil {
		// Sub fails only for an invalid path, which "web/dist" is not.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "page not built: "+err.Error(), http.StatusInternalServerError)
		})
	}
	index, err := fs.ReadFile(dist, "index.html")
	if err != nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "page not built: "+err.Error(), http.StatusInternalServerError)
		})
	}
	sum := sha256.Sum256(index)
	indexETag := `"` + hex.EncodeToString(sum[:12]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setPageSecurityHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch p := r.URL.Path; {
		case p == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", indexCacheControl)
			w.Header().Set("ETag", indexETag)
			http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(index))
		case p == "/index.html":
			http.Redirect(w, r, "/", http.StatusMovedPermanently)
		case strings.HasPrefix(p, "/assets/"):
			serveAsset(w, r, dist, strings.TrimPrefix(p, "/"))
		default:
			http.NotFound(w, r)
		}
	})
}

// precompressed are the encodings the build stores next to an asset, in
// the order the server prefers them.
var precompressed = []struct{ encoding, suffix string }{
	{"br", ".br"},
	{"gzip", ".gz"},
}

// serveAsset serves the built file name (assets/…) for a year, as the
// precompressed copy the request accepts if there is one. The compressed
// copies themselves are not addressable: asking for x.js.gz is 404.
func serveAsset(w http.ResponseWriter, r *http.Request, dist fs.FS, name string) {
	if !fs.ValidPath(name) || strings.HasSuffix(name, ".br") || strings.HasSuffix(name, ".gz") {
		http.NotFound(w, r)
		return
	}
	f, err := openFile(dist, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	encoding := ""
	for _, c := range precompressed {
		if !acceptsEncoding(r.Header.Get("Accept-Encoding"), c.encoding) {
			continue
		}
		if cf, err := openFile(dist, name+c.suffix); err == nil {
			defer cf.Close()
			f, encoding = cf, c.encoding
			break
		}
	}
	h := w.Header()
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", assetCacheControl)
	h.Add("Vary", "Accept-Encoding")
	etag := path.Base(name)
	if encoding != "" {
		h.Set("Content-Encoding", encoding)
		etag += "." + encoding
	}
	h.Set("ETag", strconv.Quote(etag))
	http.ServeContent(w, r, name, time.Time{}, f)
}

// file is an embedded file: embed's files can seek, which ServeContent
// needs to answer Range requests and to learn the size.
type file interface {
	io.ReadSeeker
	io.Closer
}

// openFile opens the regular file name in dist.
func openFile(dist fs.FS, name string) (file, error) {
	f, err := dist.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	rs, ok := f.(file)
	if err != nil || st.IsDir() || !ok {
		f.Close()
		return nil, fs.ErrNotExist
	}
	return rs, nil
}

// acceptsEncoding reports whether an Accept-Encoding header value accepts
// coding: listed by name or as *, with a q-value that is not zero
// (RFC 9110, section 12.5.3). Names are case-insensitive.
func acceptsEncoding(header, coding string) bool {
	star := false
	for item := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(item, ";")
		name = strings.TrimSpace(name)
		ok := true
		for param := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(param, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				ok = err == nil && q > 0
			}
		}
		switch {
		case strings.EqualFold(name, coding):
			return ok
		case name == "*":
			star = ok
		}
	}
	return star
}

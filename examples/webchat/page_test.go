package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builtAssets are the page's built scripts and style sheets, by URL path.
func builtAssets(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := fs.ReadDir(webDist, "web/dist/assets")
	require.NoError(t, err)
	for _, e := range entries {
		if ext := path.Ext(e.Name()); ext == ".js" || ext == ".css" {
			b, err := fs.ReadFile(webDist, "web/dist/assets/"+e.Name())
			require.NoError(t, err)
			out["/assets/"+e.Name()] = b
		}
	}
	require.NotEmpty(t, out, "no built assets in web/dist/assets")
	return out
}

func get(t *testing.T, h http.Handler, target string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, res *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return b
}

// Each hashed asset goes out as the build's brotli copy when the browser
// accepts br, else its gzip copy, else as built; every variant says so
// (Content-Encoding, Vary) and may be kept for a year.
func TestPage_AssetsArePrecompressedAndCachedForAYear(t *testing.T) {
	h := pageHandler()
	for p, raw := range builtAssets(t) {
		t.Run(path.Base(p), func(t *testing.T) {
			for _, tc := range []struct{ accept, encoding string }{
				{"gzip, deflate, br, zstd", "br"},
				{"gzip, deflate", "gzip"},
				{"br;q=0, gzip;q=0.5", "gzip"},
				{"", ""},
				{"identity", ""},
				{"*;q=0, identity", ""},
			} {
				res := get(t, h, p, map[string]string{"Accept-Encoding": tc.accept})
				b := body(t, res)
				require.Equal(t, http.StatusOK, res.StatusCode, "Accept-Encoding %q", tc.accept)
				assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"))
				assert.Equal(t, "Accept-Encoding", res.Header.Get("Vary"))
				assert.Equal(t, tc.encoding, res.Header.Get("Content-Encoding"), "Accept-Encoding %q", tc.accept)
				wantType := "text/javascript; charset=utf-8"
				if path.Ext(p) == ".css" {
					wantType = "text/css; charset=utf-8"
				}
				assert.Equal(t, wantType, res.Header.Get("Content-Type"))
				switch tc.encoding {
				case "":
					assert.True(t, bytes.Equal(raw, b), "the identity body is not the built file")
				case "gzip":
					zr, err := gzip.NewReader(bytes.NewReader(b))
					require.NoError(t, err)
					unzipped, err := io.ReadAll(zr)
					require.NoError(t, err)
					assert.True(t, bytes.Equal(raw, unzipped), "the gzip copy is not the built file")
					assert.Less(t, len(b), len(raw)/2, "gzip should at least halve a script or a style sheet")
				case "br":
					// Go has no brotli decoder; the browser test loads the page
					// through the brotli copies.
					assert.Less(t, len(b), len(raw)/2, "brotli should at least halve a script or a style sheet")
				}
			}
		})
	}
}

// index.html names the current build's assets, so it is checked again on
// every load: no-cache with an ETag, and a 304 when it did not change.
func TestPage_IndexIsRevalidated(t *testing.T) {
	h := pageHandler()
	res := get(t, h, "/", nil)
	html := body(t, res)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "no-cache", res.Header.Get("Cache-Control"))
	assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	etag := res.Header.Get("ETag")
	require.Regexp(t, `^"[0-9a-f]{24}"$`, etag)
	for _, src := range regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllStringSubmatch(string(html), -1) {
		assert.Equal(t, http.StatusOK, get(t, h, src[1], nil).StatusCode, "index.html names %s", src[1])
	}

	again := get(t, h, "/", map[string]string{"If-None-Match": etag})
	assert.Equal(t, http.StatusNotModified, again.StatusCode)
	assert.Empty(t, body(t, again))
	changed := get(t, h, "/", map[string]string{"If-None-Match": `"an-older-build"`})
	assert.Equal(t, http.StatusOK, changed.StatusCode)
}

// Only the page and its built files are served: not the compressed copies
// by their own names, not a folder listing, not other methods.
func TestPage_ServesOnlyThePageAndItsAssets(t *testing.T) {
	h := pageHandler()
	var some string
	for p := range builtAssets(t) {
		some = p
	}
	for _, target := range []string{some + ".br", some + ".gz", "/assets/", "/assets", "/nope.js", "/web/dist/index.html", "/assets/../index.html"} {
		res := get(t, h, target, nil)
		assert.Contains(t, []int{http.StatusNotFound, http.StatusMovedPermanently}, res.StatusCode, target)
		assert.NotEqual(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"), target)
	}
	assert.Equal(t, http.StatusMovedPermanently, get(t, h, "/index.html", nil).StatusCode)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader("x")))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}

// Every response of the page carries its Content-Security-Policy (scripts
// from its own origin only, no framing by another page) and nosniff. The
// browser test runs the whole page under these headers and fails on any
// violation.
func TestPage_SendsAContentSecurityPolicyAndNosniff(t *testing.T) {
	h := pageHandler()
	var some string
	for p := range builtAssets(t) {
		some = p
	}
	for _, target := range []string{"/", some, "/missing"} {
		res := get(t, h, target, map[string]string{"Accept-Encoding": "br"})
		csp := res.Header.Get("Content-Security-Policy")
		directives := map[string]string{}
		for d := range strings.SplitSeq(csp, ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
			directives[name] = value
		}
		assert.Equal(t, "'self'", directives["script-src"], "%s: script-src in %q", target, csp)
		assert.Equal(t, "'self'", directives["default-src"], "%s: default-src in %q", target, csp)
		assert.Equal(t, "'none'", directives["frame-ancestors"], "%s: frame-ancestors in %q", target, csp)
		assert.NotContains(t, csp, "unsafe-", target)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), target)
		assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"), target)
	}
}

func TestAcceptsEncoding(t *testing.T) {
	for _, tc := range []struct {
		header, coding string
		want           bool
	}{
		{"gzip, deflate, br", "br", true},
		{"gzip, deflate", "br", false},
		{"BR", "br", true},
		{"br;q=0", "br", false},
		{"br; q=0.0", "br", false},
		{"br;q=0.001", "br", true},
		{"*", "br", true},
		{"*;q=0", "gzip", false},
		{"*, gzip;q=0", "gzip", false},
		{"gzip;q=0, *", "gzip", false},
		{"br;q=bogus", "br", false},
		{"", "gzip", false},
		{"xbr, brx", "br", false},
	} {
		assert.Equal(t, tc.want, acceptsEncoding(tc.header, tc.coding), "%q accepts %s", tc.header, tc.coding)
	}
}

// Every built file is served with its own type and kept for a year.
func TestPage_EveryBuiltFileHasItsTypeAndIsImmutable(t *testing.T) {
	h := pageHandler()
	entries, err := fs.ReadDir(webDist, "web/dist/assets")
	require.NoError(t, err)
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if ext == ".br" || ext == ".gz" {
			continue
		}
		res := get(t, h, "/assets/"+e.Name(), nil)
		assert.Equal(t, http.StatusOK, res.StatusCode, e.Name())
		assert.Equal(t, types[ext], res.Header.Get("Content-Type"), e.Name())
		assert.Equal(t, "public, max-age=31536000, immutable", res.Header.Get("Cache-Control"), e.Name())
	}
}

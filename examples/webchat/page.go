package main

import (
	"embed"
	"io/fs"
	"net/http"
)

// webDist is the built React page (web/dist, made by `npm ci && npm run
// build` in web/). It is committed, so the server builds with only Go.
//
//go:embed web/dist
var webDist embed.FS

// pageHandler serves the embedded page: index.html at / and its assets
// under /assets/. Other paths are 404.
func pageHandler() http.Handler {
	dist, err := fs.Sub(webDist, "web/dist")
	if err != nil {
		// Sub fails only for an invalid path, which "web/dist" is not.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "page not built: "+err.Error(), http.StatusInternalServerError)
		})
	}
	files := http.FileServerFS(dist)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == "/index.html" {
			// FileServer redirects this to /; say so directly.
			http.Redirect(w, r, "/", http.StatusMovedPermanently)
			return
		}
		files.ServeHTTP(w, r)
	})
}

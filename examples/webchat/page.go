package main

import "net/http"

// pageHandler serves the web page at /. This is a placeholder: the React
// page replaces this file with one that serves its embedded build.
func pageHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(placeholderPage))
	})
}

const placeholderPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>agentloop webchat</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 42rem; margin: 2rem auto">
<h1>agentloop webchat</h1>
<p>The chat API is at <code>POST /api/chat</code>; it speaks the Vercel AI SDK 7 UI message stream,
so <code>useChat</code> and assistant-ui front ends work against it. The web page is not built yet.</p>
<p>Try it from a terminal:</p>
<pre>curl -N localhost:8080/api/chat -H 'content-type: application/json' \
  -d '{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Weather in Paris?"}]}]}'</pre>
</body>
</html>
`

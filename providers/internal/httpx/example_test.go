package httpx_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/agentloop/agentloop/providers/internal/httpx"
)

// A server that is overloaded once: the transport waits (here: not really)
// and tries again; a non-2xx answer becomes a *providers.APIError.
func Example() {
	tries := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tries++
		switch tries {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
		case 2:
			io.WriteString(w, "ok")
		default:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"type":"not_found_error","message":"model: nope"}}`)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: &httpx.RetryTransport{
		Sleep: func(ctx context.Context, d time.Duration) error { fmt.Println("waiting", d); return nil },
	}}
	defer client.CloseIdleConnections()

	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println(resp.StatusCode, string(body))

	resp, err = client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(httpx.APIError("anthropic", resp))
	// Output:
	// waiting 1s
	// 200 ok
	// anthropic: HTTP 404 (not_found_error): model: nope
}

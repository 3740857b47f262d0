package providertest_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// A server that is busy once, then streams: each request gets the next
// reply and is recorded.
func Example() {
	t := &testing.T{} // in a test: the test's t
	srv := providertest.NewServer(t,
		providertest.Reply{Status: http.StatusTooManyRequests},
		providertest.SSE([]byte("data: {}\n\n")))
	defer srv.Close()
	for range 2 {
		resp, err := http.Post(srv.URL+"/v1/chat", "application/json", strings.NewReader(`{"model":"m"}`))
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%d %s %q\n", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	fmt.Println(len(srv.Requests()), srv.Request(t, 1).URL.Path, srv.Request(t, 1).JSON(t)["model"])
	// Output:
	// 429 application/json ""
	// 200 text/event-stream "data: {}\n\n"
	// 2 /v1/chat m
}

// A recorded .chunks.jsonl fixture is framed as the API streams it.
func ExampleFraming_Frame() {
	t := &testing.T{}
	fmt.Printf("%q\n", providertest.Framing{Event: true}.Frame(t, []byte(`{"type":"ping"}`+"\n")))
	fmt.Printf("%q\n", providertest.Framing{Done: true}.Frame(t, []byte(`{"a":1}`+"\n")))
	// Output:
	// "event: ping\ndata: {\"type\":\"ping\"}\n\n"
	// "data: {\"a\":1}\n\ndata: [DONE]\n\n"
}

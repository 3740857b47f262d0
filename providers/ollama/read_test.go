package ollama

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/providers/internal/providertest"
)

// statusTransport answers every request with status and body, from memory.
type statusTransport struct {
	status int
	body   []byte
}

func (s statusTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: s.status,
		Status:     http.StatusText(s.status),
		Header:     http.Header{"Content-Type": {"application/x-ndjson"}},
		Body:       io.NopCloser(bytes.NewReader(s.body)),
		Request:    r,
	}, nil
}

// chatResult is what a chatFunc passed on: the decoded lines, and its error.
type chatResult struct {
	lines []api.ChatResponse
	err   error
}

func runChat(chat chatFunc) chatResult {
	var res chatResult
	res.err = chat(context.Background(), &api.ChatRequest{Model: "m"}, func(r *api.ChatResponse) error {
		res.lines = append(res.lines, *r)
		return nil
	})
	return res
}

// bothChats returns the result of this package's reader and of the
// official client's Chat on the same answer.
func bothChats(t testing.TB, status int, body []byte) (own, official chatResult) {
	t.Helper()
	rt := statusTransport{status, body}
	m, err := newModel(Config{Model: "m", Host: "http://ollama.invalid"}, rt)
	require.NoError(t, err)
	u, _ := url.Parse("http://ollama.invalid")
	return runChat(m.chat), runChat(clientChat(api.NewClient(u, &http.Client{Transport: rt})))
}

// sameChat reports how two results differ, or "".
func sameChat(own, official chatResult) string {
	if (own.err == nil) != (official.err == nil) || own.err != nil && (own.err.Error() != official.err.Error() || reflect.TypeOf(own.err) != reflect.TypeOf(official.err)) {
		return "errors differ: own " + errText(own.err) + "; official " + errText(official.err)
	}
	if len(own.lines) != len(official.lines) {
		return "line counts differ"
	}
	for i := range own.lines {
		if !reflect.DeepEqual(own.lines[i], official.lines[i]) {
			return fmt.Sprintf("line %d decodes differently:\nown      %+v\nofficial %+v", i+1, own.lines[i], official.lines[i])
		}
	}
	return ""
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return reflect.TypeOf(err).String() + " " + err.Error()
}

var chatStatuses = []int{http.StatusOK, http.StatusBadRequest, http.StatusUnauthorized, http.StatusNotFound, http.StatusInternalServerError}

// FuzzChat (design.md §19.5): this package's reader passes on the same
// decoded lines and returns the same error as the official client, whatever
// the answer.
func FuzzChat(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.ndjson"))
	require.NoError(f, err)
	for _, name := range files {
		b, err := os.ReadFile(name)
		require.NoError(f, err)
		f.Add(uint8(0), shortened(b, 8))
	}
	for _, s := range [][]byte{
		lines(lineHello, lineWorld, lineDone),
		lines(`{"model":"m","created_at":"2026-01-02T03:04:05.123+02:00","message":{"role":"ASSISTANT","content":"a\u00e9\n","thinking":"t"},"done":false,"extra":[1,{"x":null}]}`),
		lines(`{"Model":"m","message":{"Content":"x"}}`, `{"model":"m","model":"n"}`, `{"error":"boom"}`, `{"ERROR":"boom"}`),
		lines(`{"message":{"content":null}}`, `{"done":null}`, `{"eval_count":1.5}`, `{"eval_count":1e2}`, `{"total_duration":-0}`),
		lines(`{"created_at":"yesterday"}`, `{"created_at":"2026-01-02T03:04:05Z"}`, `{"created_at":"2026-01-02T03:04:05\u005a"}`),
		lines(`{"message":{"tool_calls":[{"function":{"name":"f","arguments":{"b":1,"a":{"z":1,"y":2}}}}]}}`),
		lines(`{"model":"m"} x`, `[1]`, `null`, `"s"`, ``, `{"message":"oops"}`),
		[]byte("{\"model\":\"\xff\"}\r\n{}"),
		[]byte(`{"error":"unauthorized","signin_url":"https://ollama.com/connect"}`),
	} {
		for i := range chatStatuses {
			f.Add(uint8(i), s)
		}
	}
	f.Fuzz(func(t *testing.T, status uint8, body []byte) {
		own, official := bothChats(t, chatStatuses[int(status)%len(chatStatuses)], body)
		if diff := sameChat(own, official); diff != "" {
			t.Fatalf("%s\nbody: %q", diff, body)
		}
	})
}

func TestChat_OwnReaderTakesTheUsualLinesInOnePass(t *testing.T) {
	for _, name := range benchFixtures {
		for line := range bytes.Lines(providertest.Testdata(t, name)) {
			if bytes.Contains(line, []byte(`"tool_calls"`)) {
				continue // decoded by encoding/json
			}
			var ld lineDecoder
			var r api.ChatResponse
			assert.True(t, ld.fast(bytes.TrimSuffix(line, []byte("\n")), &r), "%s: %s", name, line)
		}
	}
}

func TestChat_OwnReaderGrowsItsBufferForALongLineAndNamesAnOverlongOne(t *testing.T) {
	long := `{"model":"m","message":{"role":"assistant","content":"` + strings.Repeat("x", 100<<10) + `"},"done":false}`
	m := memoryOwnModel(t, lines(lineHello, long, lineDone))
	got := stream(m, userRequest("hi"))
	require.NoError(t, got.Err, "a 100 KB line is read: the buffer grows")
	assert.Len(t, got.Text, len("Hello")+100<<10)

	tooLong := `{"model":"m","message":{"role":"assistant","content":"` + strings.Repeat("x", maxLineBytes) + `"},"done":false}`
	m = memoryOwnModel(t, lines(lineHello, tooLong, lineDone))
	got = stream(m, userRequest("hi"))
	assert.Equal(t, "Hello", got.Text)
	assert.ErrorIs(t, got.Err, bufio.ErrTooLong)
	assert.EqualError(t, got.Err, "ollama: line 2 of the stream is longer than 8388608 bytes, the most this package reads: bufio.Scanner: token too long")
}

func TestChat_OwnReaderSendsTheRequestTheOfficialClientSends(t *testing.T) {
	type sent struct {
		method, path, query string
		header              http.Header
		body                string
	}
	var (
		mu  sync.Mutex
		got []sent
	)
	srv := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		h.Del("Accept-Encoding") // the transport's, not the reader's
		mu.Lock()
		got = append(got, sent{r.Method, r.URL.Path, r.URL.RawQuery, h, string(body)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		_, _ = w.Write(lines(lineHello, lineDone))
	})
	for _, rd := range readers {
		m := rd.model(t, srv.URL, Config{Think: ThinkOn})
		require.NoError(t, stream(m, userRequest("hi")).Err, rd.name)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 2)
	assert.Equal(t, got[1], got[0], "own reader, then official client")
	assert.Equal(t, "/api/chat", got[0].path)
	assert.Equal(t, "application/x-ndjson", got[0].header.Get("Accept"))
}

func TestChat_KeySignedAuthorizationGoesThroughTheOfficialClient(t *testing.T) {
	m, err := New(Config{Model: "m", Host: "http://127.0.0.1:11434"})
	require.NoError(t, err)
	assert.False(t, m.useClient(), "a local server is read by this package")

	m, err = New(Config{Model: "m", Host: "https://ollama.com"})
	require.NoError(t, err)
	assert.True(t, m.useClient(), "ollama.com wants a signed request, which only the official client makes")

	t.Setenv("OLLAMA_AUTH", "1")
	m, err = New(Config{Model: "m", Host: "http://127.0.0.1:11434"})
	require.NoError(t, err)
	assert.True(t, m.useClient(), "OLLAMA_AUTH asks for signed requests")
}

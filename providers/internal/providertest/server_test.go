package providertest_test

import (
	"bufio"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop/providers/internal/providertest"
)

func get(t *testing.T, url string) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"n":1}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestServer_AnswersInTurnThenRepeatsTheLastReply(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte("a"), []byte("b"))
	var got []string
	for range 3 {
		_, body, err := get(t, srv.URL)
		require.NoError(t, err)
		got = append(got, body)
	}
	assert.Equal(t, []string{"a", "b", "b"}, got)
}

func TestServer_WithoutRepliesAnswersAnEmptyStream(t *testing.T) {
	srv := providertest.NewServer(t)
	resp, body, err := get(t, srv.URL)
	require.NoError(t, err)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Empty(t, body)
}

func TestServer_ContentTypeDefaultsByStatusAndTheReplysHeaderWins(t *testing.T) {
	srv := providertest.NewServer(t,
		providertest.Reply{Status: 503, Header: http.Header{"Retry-After": {"1"}}},
		providertest.Reply{Header: http.Header{"Content-Type": {"application/x-ndjson"}}})
	resp, _, _ := get(t, srv.URL)
	assert.Equal(t, 503, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	resp, _, _ = get(t, srv.URL)
	assert.Equal(t, "application/x-ndjson", resp.Header.Get("Content-Type"))
}

func TestServer_RecordsEachRequestAndRequestsIsACopy(t *testing.T) {
	srv := providertest.NewServer(t)
	assert.Nil(t, srv.Requests(), "none yet")
	req, err := http.NewRequest("POST", srv.URL+"/v1/x?alt=sse", strings.NewReader(`{"model":"m"}`))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", "k")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()

	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	reqs[0] = providertest.Request{}
	r := srv.Request(t, 0)
	assert.Equal(t, "POST", r.Method)
	assert.Equal(t, "/v1/x?alt=sse", r.URL.String())
	assert.Equal(t, "k", r.Header.Get("X-Api-Key"))
	assert.Equal(t, map[string]any{"model": "m"}, r.JSON(t))
}

func TestServer_RequestFailsTheTestWhenTooFewCame(t *testing.T) {
	srv := providertest.NewServer(t)
	ft := &fakeT{TB: t}
	done := make(chan struct{})
	go func() { // FailNow ends the goroutine, as it ends a test
		defer close(done)
		srv.Request(ft, 0)
	}()
	<-done
	assert.True(t, ft.failed)
}

// fakeT records a failure instead of failing the real test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) FailNow()              { f.failed = true; runtime.Goexit() }

func TestServer_LinesAreFlushedOneByOne(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Body: []byte("1\n2\n"), Lines: true, Hold: true})
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	sc := bufio.NewScanner(resp.Body)
	// Both lines arrive while the response is still held open: each was
	// flushed.
	require.True(t, sc.Scan())
	assert.Equal(t, "1", sc.Text())
	require.True(t, sc.Scan())
	assert.Equal(t, "2", sc.Text())
	resp.Body.Close()
	<-srv.Gone()
}

func TestServer_CutDropsTheConnectionAfterTheBody(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Body: []byte("data: x\n\n"), Cut: true})
	_, body, err := get(t, srv.URL)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, "data: x\n\n", body)
}

func TestServer_IsSafeForConcurrentUse(t *testing.T) {
	srv := providertest.NewSSEServer(t, []byte("x"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := http.Get(srv.URL)
			if err == nil {
				resp.Body.Close()
			}
			_ = srv.Requests()
		})
	}
	wg.Wait()
	assert.Len(t, srv.Requests(), 8)
}

func TestFraming_FrameSkipsBlankLinesAndCanEndWithDoneInCRLF(t *testing.T) {
	assert.Equal(t, "data: {\"a\":1}\r\n\r\ndata: [DONE]\r\n\r\n", string(providertest.Framing{Done: true, CRLF: true}.Frame(t, []byte("\n{\"a\":1}\n\n"))))
}

package aisdk_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/internal/pipenet"
	"github.com/agentloop/agentloop/aisdk/internal/servetest"
	"github.com/agentloop/agentloop/simtest"
)

// smallBuffers is a listener whose connections have a small send buffer,
// so that a client that does not read blocks the server's writes after a
// few kilobytes instead of megabytes.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4 << 10)
	}
	return c, err
}

// bigAnswer is an answer of 64 text deltas of 4 KiB each (one string,
// shared by every run), far more than the socket buffers hold.
func bigAnswer() []simtest.Step {
	piece := strings.Repeat("x", 4<<10)
	steps := make([]simtest.Step, 64)
	for i := range steps {
		steps[i] = simtest.Text(piece)
	}
	return steps
}

// serveWatched serves h on a listener with small buffers; every request
// that ends sends on the returned channel.
func serveWatched(t testing.TB, h http.Handler) (*httptest.Server, <-chan struct{}) {
	ended := make(chan struct{}, 4096)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { ended <- struct{}{} }()
		h.ServeHTTP(w, r)
	}))
	srv.Listener = smallBuffers{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, ended
}

// postAndStopReading posts a chat request over a raw connection with a
// small receive buffer and reads nothing but the status line.
func postAndStopReading(t testing.TB, addr, chatID string) net.Conn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := fmt.Sprintf(`{"id":%q,"messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Write a lot."}]}]}`, chatID)
	fmt.Fprintf(c, "POST /api/chat HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	line, err := bufio.NewReaderSize(c, 16).ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("status line %q: %v", line, err)
	}
	return c
}

// A client that stops reading a streamed response is dropped once a write
// waited WriteTimeout; the stored run goes on without it and is saved.
// The server runs on in-memory connections in a bubble, so that the write
// deadline fires on the bubble's clock.
func TestStored_AClientThatStopsReadingIsDroppedAndTheRunIsSaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const writeTimeout = 10 * time.Second
		st := newStore(t)
		h := &aisdk.ChatServer{
			Agent:        &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: bigAnswer()})},
			Store:        st,
			Logger:       slog.New(slog.DiscardHandler),
			KeepAlive:    -1,
			WriteTimeout: writeTimeout,
		}
		t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
		ended := make(chan struct{})
		l, _ := pipenet.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(ended)
			h.ServeHTTP(w, r)
		}))
		c, err := l.Dial(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		body := `{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Write a lot."}]}]}`
		fmt.Fprintf(c, "POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		line, err := bufio.NewReaderSize(c, 16).ReadString('\n')
		if err != nil || !strings.Contains(line, "200") {
			t.Fatalf("status line %q: %v", line, err)
		}
		select {
		case <-ended:
		case <-time.After(10 * writeTimeout): // the stream's lease timers keep the bubble going
			t.Fatalf("the response to a client that does not read was still being written after %v", 10*writeTimeout)
		}
		if took := time.Since(start); took != writeTimeout {
			t.Errorf("the client was dropped after %v, want WriteTimeout (%v)", took, writeTimeout)
		}
		synctest.Wait() // the run, on its own, saves the answer
		if got := len(servetest.History(t, st, "c").LastAssistantText()); got != 64*4<<10 {
			t.Errorf("the stored answer has %d bytes, want %d", got, 64*4<<10)
		}
	})
}

// BenchmarkStuckClients measures what clients that stop reading cost: it
// starts AGENTLOOP_STUCK_CLIENTS (default 1000) requests whose clients
// read nothing, with WriteTimeout 10 s (stateless, so that stored answers
// do not count), and reports the process's goroutines, open descriptors
// and RSS while they are stuck, once the write deadline dropped them (the
// clients' own connections still open), and once the clients closed.
//
//	go test ./aisdk/ -run '^$' -bench BenchmarkStuckClients -benchtime 1x
func BenchmarkStuckClients(b *testing.B) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("AGENTLOOP_STUCK_CLIENTS")); err == nil && v > 0 {
		n = v
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("needs /proc (Linux) to count descriptors and RSS")
	}
	if limit := openFilesLimit(); limit > 0 && 2*n+100 > limit {
		// Each client is two descriptors here: its own and the server's.
		b.Logf("%d clients need more descriptors than the limit of %d: measuring %d", n, limit, (limit-100)/2)
		n = (limit - 100) / 2
	}
	answer := bigAnswer()
	h := &aisdk.Handler{
		Agent:        &agentloop.Agent{Model: simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) { return answer, nil })},
		Logger:       slog.New(slog.DiscardHandler),
		KeepAlive:    -1,
		WriteTimeout: 10 * time.Second, // longer than it takes to connect them all
	}
	for range b.N {
		srv, ended := serveWatched(b, h)
		before := sample()
		conns := make([]net.Conn, n)
		for i := range conns {
			conns[i] = postAndStopReading(b, srv.Listener.Addr().String(), "")
		}
		stuck := sample()
		for range n {
			<-ended
		}
		dropped := sample()
		for _, c := range conns {
			_ = c.Close()
		}
		srv.Close()
		closed := sample()
		b.ReportMetric(float64(stuck.goroutines-before.goroutines)/float64(n), "goroutines/stuck-client")
		b.ReportMetric(float64(stuck.rss-before.rss)/float64(n)/1024, "KiB-RSS/stuck-client")
		b.ReportMetric(float64(stuck.heap-before.heap)/float64(n)/1024, "KiB-heap/stuck-client")
		b.ReportMetric(float64(dropped.rss-before.rss)/(1<<20), "MiB-RSS-after-deadline")
		b.ReportMetric(float64(dropped.goroutines-before.goroutines), "goroutines-after-deadline")
		b.ReportMetric(float64(dropped.fds-before.fds), "fds-after-deadline")
		b.ReportMetric(float64(closed.fds-before.fds), "fds-after-close")
		b.Logf("%d clients that do not read: before %v; stuck %v; after the write deadline %v (the clients' %d connections still open); after they closed %v",
			n, before, stuck, dropped, n, closed)
	}
}

// openFilesLimit returns the process's soft limit of open descriptors
// (/proc/self/limits), or 0 when unknown.
func openFilesLimit() int {
	b, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

type usage struct {
	goroutines, fds int
	rss, heap       int64 // bytes: resident, and the Go heap in use
}

func (u usage) String() string {
	return fmt.Sprintf("%d goroutines, %d descriptors, %.1f MiB RSS (%.1f MiB heap)", u.goroutines, u.fds, float64(u.rss)/(1<<20), float64(u.heap)/(1<<20))
}

func sample() usage {
	debug.FreeOSMemory() // a GC that returns what it frees, so RSS shows what is held
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	u := usage{goroutines: runtime.NumGoroutine(), heap: int64(ms.HeapInuse)}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		u.fds = len(fds)
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				u.rss = kb << 10
			}
		}
	}
	return u
}

package aisdk

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
)

// BenchmarkHTTP_ConcurrentRuns is issue 16's web-scale row: one op is
// 1,000 chat requests posted at once to a real HTTP server on loopback,
// each answered by a model with 200 text deltas, every response
// read to its end by its own client. The server runs in a process of its
// own (this test binary, re-run as [TestHTTPBenchServer]), so that its
// memory is measured apart from the clients': the benchmark reports ms
// per op (all 1,000 streams done); server-peak-RSS-MB, the server
// process's peak resident memory (VmHWM; Linux only); server-CPU-ms/op,
// its user and system CPU time, which the load of other processes
// changes less than ms/op; and per run (one stream) its allocations,
// bytes allocated and write system calls (Linux only), the process's
// start included.
//
//	go test -run '^$' -bench HTTP_ConcurrentRuns -benchtime 5x ./aisdk/
func BenchmarkHTTP_ConcurrentRuns(b *testing.B) {
	const (
		runs   = 1000
		deltas = httpBenchDeltas
	)
	cmd := exec.CommandContext(b.Context(), os.Args[0], "-test.run=^TestHTTPBenchServer$")
	cmd.Env = append(os.Environ(), httpBenchServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		b.Fatalf("the server process printed no address: %v", lines.Err())
	}
	url := "http://" + strings.TrimSpace(lines.Text())

	tr := &http.Transport{MaxIdleConnsPerHost: runs, MaxIdleConns: runs}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	body := userBody("hi")
	post := func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n, err := countDeltas(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK || n != deltas {
			return fmt.Errorf("status %d, %d text deltas, want %d", resp.StatusCode, n, deltas)
		}
		return nil
	}

	ctx := b.Context()
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, runs)
		for range runs {
			wg.Go(func() {
				if err := post(ctx); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
	b.ReportMetric(0, "ns/op")
	stdin.Close()
	if lines.Scan() {
		var hwm, mallocs, bytes, writes int64
		if _, err := fmt.Sscan(lines.Text(), &hwm, &mallocs, &bytes, &writes); err == nil {
			if writes > 0 {
				b.ReportMetric(float64(writes)/float64(b.N*runs), "server-writes/run")
			}
			if hwm > 0 {
				b.ReportMetric(float64(hwm)/(1<<20), "server-peak-RSS-MB")
			}
			b.ReportMetric(float64(mallocs)/float64(b.N*runs), "server-allocs/run")
			b.ReportMetric(float64(bytes)/float64(b.N*runs), "server-B/run")
		}
	}
	if err := cmd.Wait(); err == nil {
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "server-CPU-ms/op")
	}
}

const (
	httpBenchServerEnv = "AISDK_HTTP_BENCH_SERVER"
	httpBenchDeltas    = 200
)

// TestHTTPBenchServer is the server process of
// [BenchmarkHTTP_ConcurrentRuns] (skipped otherwise): it serves a Handler
// whose model answers every request with 200 pre-built text deltas, prints
// its address, and when its stdin closes prints its peak resident memory
// in bytes, how many allocations and bytes it allocated and how many
// write system calls it made (0 where the system does not tell it) and
// stops.
func TestHTTPBenchServer(t *testing.T) {
	if os.Getenv(httpBenchServerEnv) == "" {
		t.Skip("the server process of BenchmarkHTTP_ConcurrentRuns")
	}
	// The model yields pre-built chunks, so that the server's figures are
	// aisdk's and the loop's, not a scripted model's boxing of each delta.
	chunks := make([]agentloop.Chunk, httpBenchDeltas)
	for i := range chunks {
		chunks[i] = agentloop.TextDelta{Text: "word "}
	}
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			for _, c := range chunks {
				if !yield(c, nil) {
					return
				}
			}
		}
	})
	srv := httptest.NewServer(&Handler{Agent: &agentloop.Agent{Model: model}})
	fmt.Println(srv.Listener.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
	hwm, _ := peakRSS()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Println(hwm, ms.Mallocs, ms.TotalAlloc, writeSyscalls())
}

// countDeltas reads an SSE response to its end and counts its text-delta
// events.
func countDeltas(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		if bytes.HasPrefix(sc.Bytes(), []byte(`data: {"type":"text-delta"`)) {
			n++
		}
	}
	return n, sc.Err()
}

// writeSyscalls returns how many write system calls the process made,
// where the system tells it (Linux's /proc/self/io), or 0.
func writeSyscalls() int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "syscw:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return n
		}
	}
	return 0
}

// peakRSS returns the process's peak resident set size in bytes, where
// the system tells it (Linux's /proc/self/status).
func peakRSS() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, false
			}
			return kb << 10, true
		}
	}
	return 0, false
}

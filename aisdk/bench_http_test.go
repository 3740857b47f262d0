package aisdk

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

// BenchmarkHTTP_ConcurrentRuns is issue 16's web-scale row: one op is
// 1,000 chat requests posted at once to a real HTTP server on loopback,
// each answered by a scripted model with 200 text deltas, every response
// read to its end by its own client. The server runs in a process of its
// own (this test binary, re-run as [TestHTTPBenchServer]), so that its
// memory is measured apart from the clients': the benchmark reports ms
// per op (all 1,000 streams done) and server-peak-RSS-MB, the server
// process's peak resident memory (VmHWM; Linux only).
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
		if hwm, err := strconv.ParseInt(lines.Text(), 10, 64); err == nil && hwm > 0 {
			b.ReportMetric(float64(hwm)/(1<<20), "server-peak-RSS-MB")
		}
	}
}

const (
	httpBenchServerEnv = "AISDK_HTTP_BENCH_SERVER"
	httpBenchDeltas    = 200
)

// TestHTTPBenchServer is the server process of
// [BenchmarkHTTP_ConcurrentRuns] (skipped otherwise): it serves a Handler
// whose scripted model answers every request with 200 text deltas, prints
// its address, and when its stdin closes prints its peak resident memory
// in bytes (0 where the system does not tell it) and stops.
func TestHTTPBenchServer(t *testing.T) {
	if os.Getenv(httpBenchServerEnv) == "" {
		t.Skip("the server process of BenchmarkHTTP_ConcurrentRuns")
	}
	text := strings.Repeat("word ", httpBenchDeltas)
	model := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(text)}, nil
	})
	srv := httptest.NewServer(&Handler{Agent: &agentloop.Agent{Model: model}})
	fmt.Println(srv.Listener.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
	hwm, _ := peakRSS()
	fmt.Println(hwm)
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

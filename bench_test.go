package agentloop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
)

const benchDeltas = 1000

// textChunks are benchDeltas single-word text deltas, boxed once: the
// benchmarks' models yield them again on every run, so that a run's cost
// is the loop's, without a script's preparation (or its garbage).
var textChunks = func() []agentloop.Chunk {
	chunks := make([]agentloop.Chunk, benchDeltas)
	for i := range chunks {
		chunks[i] = agentloop.TextDelta{Text: "ab "}
	}
	return chunks
}()

// deltaModel yields textChunks on every call.
var deltaModel = agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
	return func(yield func(agentloop.Chunk, error) bool) {
		for _, c := range textChunks {
			if !yield(c, nil) {
				return
			}
		}
	}
})

// BenchmarkModelOnly_TextDeltas is the baseline: ranging over the model's
// pre-built chunks without the loop.
func BenchmarkModelOnly_TextDeltas(b *testing.B) {
	req := &agentloop.Request{}
	b.ReportAllocs()
	runtime.LockOSThread() // for threadCPUNow
	defer runtime.UnlockOSThread()
	var mallocs uint64
	var elapsed, cpu, thread time.Duration
	for b.Loop() {
		before := mallocsNow() // stops the world: outside the timed part
		start, cpuStart, threadStart := time.Now(), cpuNow(), threadCPUNow()
		for range deltaModel.Stream(context.Background(), req) {
		}
		elapsed += time.Since(start)
		cpu += cpuNow() - cpuStart
		thread += threadCPUNow() - threadStart
		mallocs += mallocsNow() - before
	}
	reportPerDelta(b, elapsed, cpu, thread, mallocs)
}

// BenchmarkStream_TextDeltas measures the loop's overhead per text delta
// (the goal: well under 1µs and at most one allocation added per delta).
// Compare allocs/delta with BenchmarkModelOnly_TextDeltas.
func BenchmarkStream_TextDeltas(b *testing.B) {
	history := agentloop.History{agentloop.UserMessage("go")}
	b.ReportAllocs()
	runtime.LockOSThread() // for threadCPUNow
	defer runtime.UnlockOSThread()
	var mallocs uint64
	var elapsed, cpu, thread time.Duration
	for b.Loop() {
		a := &agentloop.Agent{Model: deltaModel}
		before := mallocsNow() // stops the world: outside the timed part
		start, cpuStart, threadStart := time.Now(), cpuNow(), threadCPUNow()
		for _, err := range a.Stream(context.Background(), history, nil) {
			if err != nil {
				b.Fatal(err)
			}
		}
		elapsed += time.Since(start)
		cpu += cpuNow() - cpuStart
		thread += threadCPUNow() - threadStart
		mallocs += mallocsNow() - before
	}
	reportPerDelta(b, elapsed, cpu, thread, mallocs)
}

func mallocsNow() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// reportPerDelta reports the streaming part only: not the script's
// preparation, nor the ReadMemStats calls that count its allocations.
// cpu-ns/delta is the process's CPU time (every thread, the garbage
// collector's included), steadier than wall time on a loaded machine;
// thread-cpu-ns/delta is the CPU time of the benchmark's goroutine, locked
// to its thread: the run's ranging goroutine, which does a run's work
// (a nested run's too, when the sub-run is ranged in place).
func reportPerDelta(b *testing.B, elapsed, cpu, thread time.Duration, mallocs uint64) {
	n := float64(b.N) * benchDeltas
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/delta")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/delta")
	b.ReportMetric(float64(thread.Nanoseconds())/n, "thread-cpu-ns/delta")
	b.ReportMetric(float64(mallocs)/n, "allocs/delta")
}

// BenchmarkStream_ConcurrentTools runs 8 tools that each take 20ms in one
// turn: concurrently the turn takes about 20ms, sequentially about 160ms.
func BenchmarkStream_ConcurrentTools(b *testing.B) {
	const tools = 8
	wait, err := agentloop.NewRawTool("wait", "Waits 20ms.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		t := time.NewTimer(20 * time.Millisecond)
		defer t.Stop()
		select {
		case <-t.C:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	var calls []simtest.Step
	for i := range tools {
		calls = append(calls, simtest.Call(fmt.Sprintf("c%d", i), "wait", nil))
	}
	for _, concurrency := range []int{1, tools} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			for b.Loop() {
				a := &agentloop.Agent{
					Model:           simtest.NewModel(simtest.Turn{Reply: calls}, simtest.Turn{Reply: []simtest.Step{simtest.Text("ok")}}),
					Tools:           []*agentloop.Tool{wait},
					ToolConcurrency: concurrency,
				}
				if _, err := agentloop.Drain(a.Stream(context.Background(), agentloop.History{agentloop.UserMessage("go")}, nil)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/turn")
		})
	}
}

// BenchmarkStream_ConcurrentRuns holds 1000 runs open at once (each paused in
// the middle of its model stream) and reports the memory each one takes.
func BenchmarkStream_ConcurrentRuns(b *testing.B) {
	const runs = 1000
	for b.Loop() {
		release := make(chan struct{})
		var streaming, done sync.WaitGroup
		streaming.Add(runs)
		done.Add(runs)
		model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
			return func(yield func(agentloop.Chunk, error) bool) {
				if !yield(agentloop.TextDelta{Text: "hello"}, nil) {
					return
				}
				streaming.Done()
				<-release
				yield(agentloop.TextDelta{Text: " world"}, nil)
			}
		})
		a := &agentloop.Agent{Model: model}
		history := agentloop.History{agentloop.UserMessage("hi")}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			go func() {
				defer done.Done()
				for range a.Stream(context.Background(), history, nil) {
				}
			}()
		}
		streaming.Wait()
		runtime.ReadMemStats(&after)
		close(release)
		done.Wait()
		perRun := float64((after.HeapAlloc+after.StackInuse)-(before.HeapAlloc+before.StackInuse)) / runs
		b.ReportMetric(perRun, "B/run")
	}
}

// BenchmarkStream_ToolCalls measures the loop's cost per tool call of a
// trivial typed tool: 100 calls in one turn, then the answer, from a model
// that yields pre-built chunks (so the figure is the loop's, not the
// scripted model's).
func BenchmarkStream_ToolCalls(b *testing.B) {
	const calls = 100
	type addArgs struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add, err := agentloop.NewTool("add", "Add.", func(ctx context.Context, in addArgs) (int, error) { return in.A + in.B, nil })
	if err != nil {
		b.Fatal(err)
	}
	chunks := make([]agentloop.Chunk, calls)
	for i := range chunks {
		chunks[i] = agentloop.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "add", Args: json.RawMessage(fmt.Sprintf(`{"a":%d,"b":1}`, i))}
	}
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if req.Turn > 1 {
				yield(agentloop.TextDelta{Text: "ok"}, nil)
				return
			}
			for _, c := range chunks {
				if !yield(c, nil) {
					return
				}
			}
		}
	})
	history := agentloop.History{agentloop.UserMessage("add")}
	a := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{add}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agentloop.Drain(a.Stream(context.Background(), history, nil)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/calls, "ns/call")
	b.ReportMetric(float64(testing.AllocsPerRun(1, func() {
		_, _ = agentloop.Drain(a.Stream(context.Background(), history, nil))
	}))/calls, "allocs/call")
}

// BenchmarkStream_BeforeModelCallLongHistory runs 10 turns on a history of
// 1,000 messages with a BeforeModelCall hook that edits one message: the
// hook's copy of the history should cost what the hook changes, not the
// history's length.
func BenchmarkStream_BeforeModelCallLongHistory(b *testing.B) {
	var history agentloop.History
	for i := range 500 {
		history = append(history, agentloop.UserMessage(fmt.Sprintf("question %d", i)),
			agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart(fmt.Sprintf("answer %d", i))}})
	}
	history = append(history, agentloop.UserMessage("go"))
	noop, err := agentloop.NewRawTool("noop", "Nothing.", nil, func(context.Context, json.RawMessage) (string, error) { return "ok", nil })
	if err != nil {
		b.Fatal(err)
	}
	hooks := &agentloop.Hooks{BeforeModelCall: func(_ context.Context, req *agentloop.Request) error {
		req.Messages[0].Parts[0].Text = "[redacted]"
		return nil
	}}
	model := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if req.Turn < 10 {
				yield(agentloop.ToolCall{Name: "noop", Args: json.RawMessage(`{}`)}, nil)
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	b.ReportAllocs()
	for b.Loop() {
		a := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{noop}, Hooks: hooks, MaxTurns: 10}
		if _, err := agentloop.Drain(a.Stream(context.Background(), history, nil)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/turn")
}

// BenchmarkStream_NestedTextDeltas measures a sub-agent's text deltas
// reaching the caller's consumer as Nested items (design.md §3.10): one
// lead turn calls a sub-agent whose turn streams benchDeltas deltas.
// Compare ns/delta with BenchmarkStream_TextDeltas, a flat run of the
// same deltas.
func BenchmarkStream_NestedTextDeltas(b *testing.B) {
	history := agentloop.History{agentloop.UserMessage("go")}
	sub := &agentloop.Agent{Name: "sub", Model: deltaModel}
	tool, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	if err != nil {
		b.Fatal(err)
	}
	call := agentloop.ToolCall{ID: "c1", Name: "sub", Args: json.RawMessage(`{"task":"t"}`)}
	lead := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if req.Turn == 1 {
				yield(call, nil)
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	a := &agentloop.Agent{Name: "lead", Model: lead, Tools: []*agentloop.Tool{tool}}
	b.ReportAllocs()
	runtime.LockOSThread() // for threadCPUNow
	defer runtime.UnlockOSThread()
	var mallocs uint64
	var elapsed, cpu, thread time.Duration
	for b.Loop() {
		before := mallocsNow() // stops the world: outside the timed part
		start, cpuStart, threadStart := time.Now(), cpuNow(), threadCPUNow()
		for _, err := range a.Stream(context.Background(), history, nil) {
			if err != nil {
				b.Fatal(err)
			}
		}
		elapsed += time.Since(start)
		cpu += cpuNow() - cpuStart
		thread += threadCPUNow() - threadStart
		mallocs += mallocsNow() - before
	}
	reportPerDelta(b, elapsed, cpu, thread, mallocs)
}

// BenchmarkStream_NestedTextDeltasBesideACall is BenchmarkStream_NestedTextDeltas
// with a second call in the lead's turn that runs until the sub-run has
// ended: the sub-run then runs on its call's goroutine and its items reach
// the consumer through the box (design.md §3.10).
func BenchmarkStream_NestedTextDeltasBesideACall(b *testing.B) {
	history := agentloop.History{agentloop.UserMessage("go")}
	sub := &agentloop.Agent{Name: "sub", Model: deltaModel}
	tool, err := agentloop.AgentTool(sub, agentloop.AgentToolOptions{})
	if err != nil {
		b.Fatal(err)
	}
	var subDone chan struct{} // replaced before each run
	wait, err := agentloop.NewRawTool("wait", "Waits for the sub-run.", nil, func(ctx context.Context, _ json.RawMessage) (string, error) {
		select {
		case <-subDone:
			return "ok", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	calls := []agentloop.Chunk{
		agentloop.ToolCall{ID: "c1", Name: "sub", Args: json.RawMessage(`{"task":"t"}`)},
		agentloop.ToolCall{ID: "c2", Name: "wait", Args: json.RawMessage(`{}`)},
	}
	lead := agentloop.ModelFunc(func(ctx context.Context, req *agentloop.Request) iter.Seq2[agentloop.Chunk, error] {
		return func(yield func(agentloop.Chunk, error) bool) {
			if req.Turn == 1 {
				for _, c := range calls {
					if !yield(c, nil) {
						return
					}
				}
				return
			}
			yield(agentloop.TextDelta{Text: "done"}, nil)
		}
	})
	a := &agentloop.Agent{Name: "lead", Model: lead, Tools: []*agentloop.Tool{tool, wait}}
	b.ReportAllocs()
	runtime.LockOSThread() // for threadCPUNow
	defer runtime.UnlockOSThread()
	var mallocs uint64
	var elapsed, cpu, thread time.Duration
	for b.Loop() {
		subDone = make(chan struct{})
		before := mallocsNow() // stops the world: outside the timed part
		start, cpuStart, threadStart := time.Now(), cpuNow(), threadCPUNow()
		for it, err := range a.Stream(context.Background(), history, nil) {
			if err != nil {
				b.Fatal(err)
			}
			if n, ok := it.(*agentloop.Nested); ok {
				if _, ok := n.Item.(agentloop.Final); ok {
					close(subDone)
				}
			}
		}
		elapsed += time.Since(start)
		cpu += cpuNow() - cpuStart
		thread += threadCPUNow() - threadStart
		mallocs += mallocsNow() - before
	}
	reportPerDelta(b, elapsed, cpu, thread, mallocs)
}

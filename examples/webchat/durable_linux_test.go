package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
)

// TestHelperMarkingMCPServer is not a test: started (through -mcp) by the
// webchat processes of TestDurable_*, it serves two tools over stdio that
// leave a line in the file $WEBCHAT_MARKS at each call: "mark", and "slow",
// whose first call then says "started" on the FIFO $WEBCHAT_FIFO and
// never returns (its process is killed), while later calls return, first
// saying "again" on the FIFO $WEBCHAT_FIFO_AGAIN if it is set. With
// $WEBCHAT_FIFO_RELEASE set, the first call returns once it read that
// FIFO to its end instead.
func TestHelperMarkingMCPServer(t *testing.T) {
	if os.Getenv("WEBCHAT_MARKS_HELPER") != "1" {
		t.Skip("helper process for TestDurable_*")
	}
	// Die with the webchat process that started this one: a killed
	// webchat leaves no MCP server behind, waiting in its slow tool.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); errno != 0 {
		t.Fatal(errno)
	}
	if os.Getppid() == 1 {
		os.Exit(0) // the parent died before the line above
	}
	marks, fifo := os.Getenv("WEBCHAT_MARKS"), os.Getenv("WEBCHAT_FIFO")
	leave := func(line string) (first bool) {
		before, _ := os.ReadFile(marks)
		f, err := os.OpenFile(marks, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, line); err != nil {
			panic(err)
		}
		return !strings.Contains(string(before), line+"\n")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "marker", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "mark", Description: "Leaves a mark."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			leave("mark")
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "marked"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Takes its time."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			if leave("slow") {
				if err := os.WriteFile(fifo, []byte("started\n"), 0); err != nil {
					panic(err)
				}
				if release := os.Getenv("WEBCHAT_FIFO_RELEASE"); release != "" {
					if _, err := os.ReadFile(release); err != nil {
						panic(err)
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil, nil
				}
				select {} // until the process is killed (with its webchat process)
			}
			if again := os.Getenv("WEBCHAT_FIFO_AGAIN"); again != "" {
				if err := os.WriteFile(again, []byte("again\n"), 0); err != nil {
					panic(err)
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slow done"}}}, nil, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		t.Fatal(err)
	}
	os.Exit(0)
}

// A webchat process is killed (SIGKILL) while a run's slow tool runs; the
// process started again (the same DBOS executor) finishes the run: the
// chat ends with the answer, the completed tool call ran once, and the
// call in flight ran again (steps are at least once).
func TestDurable_AKilledProcessesRunIsFinishedByItsRestartWithoutRepeatingCompletedSteps(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { stopAndRestart(t, "", (*process).kill) })
	t.Run("PostgreSQL", func(t *testing.T) { stopAndRestart(t, postgresDB(t), (*process).kill) })
}

// The same with SIGTERM (a deploy): the process shuts down without
// cancelling the run, which its next start goes on with.
func TestDurable_ARunCutByASIGTERMIsFinishedByTheNextStart(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { stopAndRestart(t, "", (*process).term) })
	t.Run("PostgreSQL", func(t *testing.T) { stopAndRestart(t, postgresDB(t), (*process).term) })
}

// term ends the process as a deploy does (SIGTERM), and waits for it.
func (p *process) term(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.done
}

// stopAndRestart runs a chat on a webchat process on db (an SQLite file of
// the test's when ""), stops the process with stop while the run's slow
// tool runs, starts it again and checks that the run finished.
func stopAndRestart(t *testing.T, db string, stop func(*process, *testing.T)) {
	if db == "" {
		db = filepath.Join(t.TempDir(), "chats.db")
	}
	m := newMarkingRun(t, false)
	args := append([]string{"-db", db, "-executor", "one"}, m.args...)
	bin := buildWebchat(t)
	first := startProcess(t, bin, args...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, sent := sendGo(t, ctx, first, m.fifo)
	stop(first, t)
	<-sent // cut off, or ended by the shutdown: the run goes on without it

	second := startProcess(t, bin, args...)
	waitFIFO(t, m.again, second) // the run goes on: the slow tool runs again
	resumer, resumed := resumeOn(t, second, client)
	if msgs := resumer.Messages(); resumed && (len(msgs) != 2 || strings.Count(fmt.Sprint(msgs[1].Parts), "Marking.") != 1 || !strings.Contains(fmt.Sprint(msgs[1].Parts), "All done.")) {
		t.Errorf("the resumed stream shows %+v; want each text once, to the answer", msgs)
	}
	checkFinished(t, m.marks, second)
}

// Two replicas on one PostgreSQL: A is killed while a run's slow tool
// runs; once A's stream lease ran out, B finds the run A abandoned, has
// DBOS resume it on a live executor, and goes on with it in a new stream:
// the chat ends with the answer, the completed tool call ran once.
func TestDurable_ALiveReplicaTakesOverTheRunOfAKilledOne(t *testing.T) {
	db := postgresDB(t)
	m := newMarkingRun(t, false)
	args := append([]string{"-db", db, "-lease", "1s"}, m.args...)
	bin := buildWebchat(t)
	a := startProcess(t, bin, append(args, "-executor", "a")...)
	b := startProcess(t, bin, append(args, "-executor", "b")...)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client, sent := sendGo(t, ctx, a, m.fifo)
	a.kill(t)
	<-sent
	waitFIFO(t, m.again, b) // B runs the slow tool again: it took the run over
	resumeOn(t, b, client)
	checkFinished(t, m.marks, b)
}

// sendGo sends "Go" in chat "c" to p, and returns once the slow tool's
// first call said "started" on fifo; the client goes on reading the answer
// until ctx ends, and sent gets what its Send returned.
func sendGo(t *testing.T, ctx context.Context, p *process, fifo string) (client *aisdktest.ChatClient, sent <-chan error) {
	t.Helper()
	client = &aisdktest.ChatClient{URL: p.url + "/api/chat", ChatID: "c"}
	done := make(chan error, 1)
	go func() {
		_, err := client.Send(ctx, "Go")
		done <- err
	}()
	waitFIFO(t, fifo, p)
	return client, done
}

// resumeOn follows chat "c" on p to its end as a page reloaded after
// client's first message does; it returns that page's client, and whether
// a stream was running to follow.
func resumeOn(t *testing.T, p *process, client *aisdktest.ChatClient) (*aisdktest.ChatClient, bool) {
	t.Helper()
	resumer := &aisdktest.ChatClient{URL: p.url + "/api/chat", ChatID: "c"}
	resumer.SetMessages(client.Messages()[:1])
	resumed, err := resumer.Resume(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return resumer, resumed
}

// waitFIFO waits until the slow tool writes its line on the FIFO path,
// failing t if p ends first.
func waitFIFO(t *testing.T, path string, p *process) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		f, err := os.Open(path) // until the tool opens it
		if err == nil {
			_, err = bufio.NewReader(f).ReadString('\n')
			f.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-p.done:
		t.Fatalf("the webchat process ended:\n%s", p.logs)
	}
}

// checkFinished checks that chat c, as p serves it, ended with the whole
// answer, each text once, and that the marks file shows mark ran once and
// slow twice (the call in flight when its first process stopped ran
// again: at least once).
func checkFinished(t *testing.T, marks string, p *process) {
	t.Helper()
	view := getChat(t, p.url, "c")
	var texts []string
	for _, msg := range view.Messages {
		for _, part := range msg.Parts {
			if part.Type == "text" {
				texts = append(texts, part.Text)
			}
		}
	}
	want := []string{"Go", "Marking.", "Now the slow one.", "All done."}
	if fmt.Sprint(texts) != fmt.Sprint(want) || view.LastRun != aisdk.RunFinished || view.Streaming {
		t.Errorf("the chat: texts %q (want %q), last run %q, streaming %v\nlog:\n%s", texts, want, view.LastRun, view.Streaming, p.logs)
	}
	got, err := os.ReadFile(marks)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "mark\nslow\nslow\n" {
		t.Errorf("marks %q: mark must run once, and slow, in flight when its process stopped, twice", got)
	}
}

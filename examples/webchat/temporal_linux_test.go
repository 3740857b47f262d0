package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/agentloop/agentloop/aisdk/aisdktest"
)

// temporalEnv names the Temporal server of the -temporal tests, as for
// durable/temporalrun's real-server tests (.ci/run starts one and sets it).
const temporalEnv = "AGENTLOOP_TEST_TEMPORAL"

// temporalServer returns the HOST:PORT of the test server, or skips t
// without one, except under CI=true, where it fails.
func temporalServer(t *testing.T) string {
	t.Helper()
	hostPort := os.Getenv(temporalEnv)
	if hostPort == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must start a Temporal server for the -temporal tests (.ci/run's Temporal step does)", temporalEnv)
		}
		t.Skipf("no Temporal server: set %s=127.0.0.1:7233 with a server running (see .ci/temporal.sh) to run the -temporal tests", temporalEnv)
	}
	return hostPort
}

// Two replicas with -temporal on one PostgreSQL: the one whose worker runs
// the run's slow tool is killed (SIGKILL) while it runs. The other replica's
// worker finishes the run: the chat ends with the answer, the completed
// tool call ran once, and the call in flight ran again (at least once).
// Temporal places the run's workflow and its tool call on either replica,
// so each replica's tool server has its own FIFO, and the test kills the
// one whose tool started.
func TestRealServer_TemporalALiveReplicaFinishesTheRunOfAKilledOne(t *testing.T) {
	testTemporalReplicaStopped(t, (*process).kill)
}

// The same with SIGTERM (a deploy): the replica stops its worker, which
// cancels the slow tool's call, and exits; the other replica's worker runs
// the call again and finishes the run, as after a SIGKILL.
func TestRealServer_TemporalALiveReplicaFinishesTheRunOfASIGTERMedOne(t *testing.T) {
	testTemporalReplicaStopped(t, (*process).term)
}

// testTemporalReplicaStopped runs the two-replica case above, ending the
// replica that runs the slow tool with stop.
func testTemporalReplicaStopped(t *testing.T, stop func(*process, *testing.T)) {
	hostPort := temporalServer(t)
	db := postgresDB(t)
	dir := t.TempDir()
	marks, again, script := filepath.Join(dir, "marks"), filepath.Join(dir, "again"), filepath.Join(dir, "script.json")
	fifos := []string{filepath.Join(dir, "fifo-a"), filepath.Join(dir, "fifo-b")}
	for _, f := range append([]string{again}, fifos...) {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err := os.WriteFile(script, []byte(markingScript), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildWebchat(t)
	var procs []*process
	for _, fifo := range fifos {
		helper := fmt.Sprintf("env WEBCHAT_MARKS_HELPER=1 WEBCHAT_MARKS=%s WEBCHAT_FIFO=%s WEBCHAT_FIFO_AGAIN=%s %s -test.run=^TestHelperMarkingMCPServer$", marks, fifo, again, os.Args[0])
		// A lease longer than the takeover (heartbeat timeout, then the
		// sticky queue's timeout): the survivor takes the stream over.
		procs = append(procs, startProcess(t, bin, "-db", db, "-script", script, "-mcp", helper, "-lease", "2m", "-temporal", hostPort))
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &aisdktest.ChatClient{URL: procs[0].url + "/api/chat", ChatID: "c"}
	sent := make(chan error, 1)
	go func() {
		_, err := client.Send(ctx, "Go")
		sent <- err
	}()
	// Each FIFO is read until its tool opens it: the slow tool's first call
	// opens the one of the replica it runs in.
	started := make(chan int, len(fifos))
	var readers sync.WaitGroup
	for i, fifo := range fifos {
		readers.Go(func() {
			f, err := os.Open(fifo)
			if err == nil {
				_, err = bufio.NewReader(f).ReadString('\n')
				f.Close()
			}
			if err == nil {
				started <- i
			}
		})
	}
	var victim int
	select {
	case victim = <-started:
	case err := <-sent:
		t.Fatalf("the chat ended before the slow tool started: %v", err)
	}
	stop(procs[victim], t)
	t.Logf("replica %d ran the slow tool: stopped", victim)
	// The other FIFO's reader waits for a writer: open it, so that it ends.
	if f, err := os.OpenFile(fifos[1-victim], os.O_WRONLY, 0); err == nil {
		f.Close()
	}
	readers.Wait()
	survivor := procs[1-victim]
	waitFIFO(t, again, survivor) // the survivor runs the slow tool again
	if victim == 0 {
		<-sent // its request died with it: follow the run on the survivor
		resumer := &aisdktest.ChatClient{URL: survivor.url + "/api/chat", ChatID: "c"}
		resumer.SetMessages(client.Messages()[:1])
		if _, err := resumer.Resume(context.Background()); err != nil {
			t.Fatal(err)
		}
	} else if err := <-sent; err != nil {
		t.Fatal(err)
	}
	t.Logf("replica %d was stopped", victim)
	checkFinished(t, marks, survivor)
}

// With -temporal, the researcher sub-agent runs in its call's tool
// activity, and its work reaches the chat while it happens (design.md
// §3.10): the stream carries the researcher's data-subagent part while it
// runs, before the call's output or the approval it pauses for, and the
// message keeps it, paused on its save_note call.
func TestRealServer_TemporalStreamsTheResearchersWorkWhileItRuns(t *testing.T) {
	hostPort := temporalServer(t)
	db := postgresDB(t)
	p := startProcess(t, buildWebchat(t), "-db", db, "-pace", "0", "-temporal", hostPort)
	client := &aisdktest.ChatClient{URL: p.url + "/api/chat", ChatID: "c"}
	msgs, err := client.Send(context.Background(), "Research the weather in Oslo")
	if err != nil {
		t.Fatal(err)
	}
	var running, approval int // the index of the first chunk of each kind
	running, approval = -1, -1
	tr := client.Transcript()
	for i, c := range tr[len(tr)-1].Chunks {
		var chunk struct {
			Type string `json:"type"`
			Data struct {
				Agent string `json:"agent"`
				State string `json:"state"`
			} `json:"data"`
		}
		if err := json.Unmarshal(c, &chunk); err != nil {
			t.Fatal(err)
		}
		switch {
		case running < 0 && chunk.Type == "data-subagent" && chunk.Data.Agent == "researcher" && chunk.Data.State == "running":
			running = i
		case approval < 0 && chunk.Type == "tool-approval-request":
			approval = i
		}
	}
	if running < 0 || approval < 0 || running > approval {
		t.Fatalf("the researcher's running part (chunk %d) does not come before the approval request (chunk %d)", running, approval)
	}
	var view struct {
		Agent string `json:"agent"`
		State string `json:"state"`
		Parts []struct {
			ToolName string `json:"toolName"`
		} `json:"parts"`
	}
	last := msgs[len(msgs)-1]
	for _, part := range last.Parts {
		if part.Type == "data-subagent" {
			if err := json.Unmarshal(part.Data, &view); err != nil {
				t.Fatal(err)
			}
		}
	}
	if view.Agent != "researcher" || view.State != "paused" || len(view.Parts) == 0 || view.Parts[len(view.Parts)-1].ToolName != "save_note" {
		t.Fatalf("the message's researcher part: %+v", view)
	}
}

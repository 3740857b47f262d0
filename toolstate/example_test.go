package toolstate_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
)

// A tracker hides a tool that keeps failing, and the HTTP API resets it.
func Example() {
	flaky, _ := agentloop.NewTool("flaky", "Fails.", func(ctx context.Context, _ struct{}) (string, error) {
		return "", errors.New("service down")
	})
	st := memstore.New(memstore.Options{}) // or sqlitestore, pgstore
	_ = st.PutChat(context.Background(), &store.Chat{ID: "chat-1"})
	tracker := &toolstate.Tracker{Docs: st, Config: &toolstate.Config{FailureThreshold: 2}}
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("c1", "flaky", nil)}},
		simtest.Turn{Reply: []simtest.Step{simtest.Call("c2", "flaky", nil)}},
		simtest.Turn{Expect: simtest.Expect{Tools: []string{}}, Reply: []simtest.Step{simtest.Text("The service is down.")}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{flaky}, Hooks: tracker.Hooks()}

	// Each run names its conversation: the chat whose tool states it uses.
	history := agentloop.History{agentloop.UserMessage("Try it.")}
	text, err := agentloop.Text(agent.Stream(context.Background(), history, &agentloop.RunOptions{ConversationID: "chat-1"}))
	fmt.Println(text, err)
	summary, _ := tracker.Summary(context.Background(), "chat-1", toolstate.Names(agent.Tools)...)
	fmt.Println(summary)

	// An operator resets the tool.
	api := toolstate.NewHandler(st, toolstate.HandlerOptions{})
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/agents/chat-1/tool-states/reset", strings.NewReader(`{"toolName":"flaky"}`)))
	fmt.Println(rec.Code)
	summary, _ = tracker.Summary(context.Background(), "chat-1")
	fmt.Println(summary)
	// Output:
	// The service is down. <nil>
	// 1 tools: 0 available, 1 failed (flaky), 0 waiting, 0 disabled
	// 200
	// 1 tools: 1 available (flaky), 0 failed, 0 waiting, 0 disabled
}

// A corrupt state is reported, and the conversation starts fresh.
func ExampleLoadOrFresh() {
	ctx := context.Background()
	st := memstore.New(memstore.Options{})
	_ = st.PutChat(ctx, &store.Chat{ID: "chat-1"})
	_ = st.PutDoc(ctx, &store.Doc{ChatID: "chat-1", Name: toolstate.DocName, Data: []byte(`{"version":1,"states":`)})

	s, err := toolstate.LoadOrFresh(ctx, st, "chat-1", toolstate.Config{})
	if errors.Is(err, toolstate.ErrCorrupt) {
		fmt.Println("corrupt tool state; starting fresh")
	}
	fmt.Println(len(s.Tools), "tools known")
	// Output:
	// corrupt tool state; starting fresh
	// 0 tools known
}

// A tool that depends on another is offered once that one has succeeded.
func ExampleState_Offered() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := toolstate.NewState(toolstate.Config{Dependencies: map[string][]string{"deploy": {"build"}}})
	fmt.Println(s.Offered(now, "build", "deploy"))
	s.RecordSuccess("build", now)
	fmt.Println(s.Offered(now, "build", "deploy"))
	// Output:
	// [build]
	// [build deploy]
}

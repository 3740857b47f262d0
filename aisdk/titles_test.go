package aisdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
)

// listTitles returns the titles of the chat list by chat id.
func listTitles(t *testing.T, api http.Handler) map[string]string {
	t.Helper()
	code, body := do(api, http.MethodGet, "/api/chats", "")
	require.Equal(t, http.StatusOK, code, body)
	var l aisdk.ChatList
	require.NoError(t, json.Unmarshal([]byte(body), &l))
	out := map[string]string{}
	for _, c := range l.Chats {
		out[c.ID] = c.Title
	}
	return out
}

func rename(api http.Handler, id, title string, edit ...func(*http.Request)) (int, string) {
	b, _ := json.Marshal(aisdk.TitleRequest{Title: title})
	return do(api, http.MethodPatch, "/api/chats/"+id, string(b), edit...)
}

func TestTitles_TheFirstAnswerNamesTheChatOnce(t *testing.T) {
	var calls atomic.Int32
	var got agentloop.History
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler),
		Title: func(ctx context.Context, h agentloop.History) (string, error) {
			calls.Add(1)
			got = h
			return "Title: \"Weather in\nParis\".", nil
		}}
	api := h.Routes("/api")
	code, body := do(api, http.MethodPost, "/api/chat", chatBody("c1", "What is the weather in Paris today?"))
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, "Weather in Paris", listTitles(t, api)["c1"], "cleaned: one line, no prefix, quotes or full stop")
	require.Len(t, got, 2, "Title gets the saved first exchange")
	assert.Equal(t, "ok", got[1].Text())

	// The next exchange keeps the title and asks for none.
	next := `{"id":"c1","messages":[{"id":"u-c1","role":"user","parts":[{"type":"text","text":"What is the weather in Paris today?"}]},` +
		`{"id":"` + viewMessages(t, api, "c1")[1].ID + `","role":"assistant","parts":[{"type":"text","text":"ok"}]},` +
		`{"id":"u2","role":"user","parts":[{"type":"text","text":"And tomorrow?"}]}]}`
	code, body = do(api, http.MethodPost, "/api/chat", next)
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, int32(1), calls.Load())
	assert.Equal(t, "Weather in Paris", listTitles(t, api)["c1"])
}

func viewMessages(t *testing.T, api http.Handler, id string) []aisdk.UIMessage {
	t.Helper()
	code, body := do(api, http.MethodGet, "/api/chats/"+id, "")
	require.Equal(t, http.StatusOK, code, body)
	var v aisdk.ChatView
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	return v.Messages
}

func TestTitles_AFailedOrEmptyTitleKeepsTheAutomaticOne(t *testing.T) {
	for name, title := range map[string]func(context.Context, agentloop.History) (string, error){
		"error": func(context.Context, agentloop.History) (string, error) { return "", errors.New("model down") },
		"empty": func(context.Context, agentloop.History) (string, error) { return " \"\" ", nil },
	} {
		t.Run(name, func(t *testing.T) {
			h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler), Title: title}
			api := h.Routes("/api")
			code, body := do(api, http.MethodPost, "/api/chat", chatBody("c1", "Plan a trip"))
			require.Equal(t, http.StatusOK, code, body)
			assert.Contains(t, body, `"type":"finish"`, "the answer still finishes")
			assert.Equal(t, "Plan a trip", listTitles(t, api)["c1"])
		})
	}
}

func TestTitles_ModelTitleAsksTheModelOnceWithoutTools(t *testing.T) {
	var req *agentloop.Request
	model := simtest.NewFuncModel(func(r *agentloop.Request) ([]simtest.Step, error) {
		req = r
		return []simtest.Step{simtest.Text("“Lisbon in May”")}, nil
	})
	title := aisdk.ModelTitle(model)
	got, err := title(context.Background(), agentloop.History{
		agentloop.UserMessage("Plan a trip to Lisbon"),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart("Here is a plan for May.")}},
	})
	require.NoError(t, err)
	assert.Equal(t, "“Lisbon in May”", got, "ModelTitle returns the reply; the ChatServer cleans it")
	require.NotNil(t, req)
	assert.Equal(t, aisdk.TitlePrompt, req.System)
	assert.Empty(t, req.Tools)
	require.Len(t, req.Messages, 1)
	assert.Equal(t, "User: Plan a trip to Lisbon\n\nAssistant: Here is a plan for May.", req.Messages[0].Text())
}

func TestTitles_ModelTitleCutsLongMessages(t *testing.T) {
	var prompt string
	model := simtest.NewFuncModel(func(r *agentloop.Request) ([]simtest.Step, error) {
		prompt = r.Messages[0].Text()
		return []simtest.Step{simtest.Text("Long")}, nil
	})
	long := strings.Repeat("é", 1500)
	_, err := aisdk.ModelTitle(model)(context.Background(), agentloop.History{
		agentloop.UserMessage(long),
		{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart(long)}},
	})
	require.NoError(t, err)
	cut := strings.Repeat("é", 1000) + "…"
	assert.Equal(t, "User: "+cut+"\n\nAssistant: "+cut, prompt, "each cut to 1,000 characters")
}

// A rename while a run saves the chat loses neither: the run's next save
// conflicts with the rename, reads the chat again and keeps the new
// title; and a chat renamed during its first answer is not named by
// Title.
func TestTitles_RenamingWhileARunSavesLosesNeither(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	wait, err := agentloop.NewTool("wait", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		close(entered)
		<-release
		return "waited", nil
	})
	require.NoError(t, err)
	model := simtest.NewFuncModel(func(r *agentloop.Request) ([]simtest.Step, error) {
		if len(r.Messages) > 0 && r.Messages[len(r.Messages)-1].Role == agentloop.RoleTool {
			return []simtest.Step{simtest.Text("done")}, nil
		}
		return []simtest.Step{simtest.Call("call-1", "wait", map[string]any{})}, nil
	})
	var titled atomic.Int32
	st := newStore(t)
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{wait}}, Store: st, Logger: slog.New(slog.DiscardHandler),
		Title: func(context.Context, agentloop.History) (string, error) { titled.Add(1); return "Generated", nil }}
	api := h.Routes("/api")

	done := make(chan string)
	go func() {
		_, body := do(api, http.MethodPost, "/api/chat", chatBody("c1", "Wait for me"))
		done <- body
	}()
	<-entered // the run saved the request and runs its tool
	code, body := rename(api, "c1", "  My\tchat ")
	require.Equal(t, http.StatusOK, code, body)
	var sum aisdk.ChatSummary
	require.NoError(t, json.Unmarshal([]byte(body), &sum))
	assert.Equal(t, "My chat", sum.Title)
	close(release)
	body = <-done
	require.Contains(t, body, `"type":"finish"`, "the run was not failed by the rename")

	c, err := st.GetChat(context.Background(), "c1")
	require.NoError(t, err)
	assert.Equal(t, "My chat", c.Title, "the run's saves kept the new title")
	require.NotEmpty(t, c.History)
	assert.Equal(t, "done", c.History[len(c.History)-1].Text(), "the rename kept the run's history")
	assert.Zero(t, titled.Load(), "a renamed chat is not named")
}

func TestTitles_RenameRefusesWhatItCannotTake(t *testing.T) {
	h := &aisdk.ChatServer{Agent: &agentloop.Agent{Model: echoModel()}, Store: newStore(t), Logger: slog.New(slog.DiscardHandler)}
	api := h.Routes("/api")
	code, body := do(api, http.MethodPost, "/api/chat", chatBody("c1", "Hello"))
	require.Equal(t, http.StatusOK, code, body)

	for _, tc := range []struct {
		name, id, body string
		edit           func(*http.Request)
		status         int
		says           string
	}{
		{"an empty title", "c1", `{"title":" \n "}`, nil, http.StatusBadRequest, "empty"},
		{"a long title", "c1", `{"title":"` + strings.Repeat("a", 61) + `"}`, nil, http.StatusBadRequest, "at most 60"},
		{"an unknown field", "c1", `{"name":"x"}`, nil, http.StatusBadRequest, "name"},
		{"not JSON", "c1", `{"title":"x"}`, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType, "application/json"},
		{"another site", "c1", `{"title":"x"}`, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, http.StatusForbidden, "cross-origin"},
		{"a body too large", "c1", `{"title":"` + strings.Repeat("a", 5000) + `"}`, nil, http.StatusRequestEntityTooLarge, "larger"},
		{"no such chat", "nope", `{"title":"x"}`, nil, http.StatusNotFound, "no chat"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var edits []func(*http.Request)
			if tc.edit != nil {
				edits = append(edits, tc.edit)
			}
			code, body := do(api, http.MethodPatch, "/api/chats/"+tc.id, tc.body, edits...)
			assert.Equal(t, tc.status, code, body)
			var e struct{ Error string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Contains(t, e.Error, tc.says)
		})
	}
	assert.Equal(t, "Hello", listTitles(t, api)["c1"], "nothing was renamed")
	code, body = rename(api, "c1", strings.Repeat("é", 60))
	assert.Equal(t, http.StatusOK, code, body, "60 characters, not bytes")
}

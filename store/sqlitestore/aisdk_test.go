package sqlitestore_test

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store/sqlitestore"
)

// aisdk's stored mode on this backend: what a memory store cannot show.

// A chat whose stored history no longer decodes is reported, and starts
// afresh with the next message.
func TestStored_ACorruptChatStartsAfresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chats.db")
	st, err := sqlitestore.Open(context.Background(), path, sqlitestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	var logs strings.Builder
	h := &aisdk.Handler{Agent: &agentloop.Agent{Model: echoModel()}, Store: st, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	client := &aisdktest.ChatClient{Handler: h, ChatID: "c"}
	if _, err := client.Send(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE agentloop_chats SET history = ? WHERE id = ?`, []byte(`{"version":2,"messages":[`), "c"); err != nil {
		t.Fatal(err)
	}
	api := h.Routes("/api")
	code, body := do(api, http.MethodGet, "/api/chats/c", "")
	if code != http.StatusOK || !strings.Contains(body, `"messages":[]`) {
		t.Errorf("a corrupt chat renders as %d %s", code, body)
	}
	if _, err := client.Send(context.Background(), "two"); err != nil {
		t.Fatal(err)
	}
	c, err := st.GetChat(context.Background(), "c")
	if err != nil {
		t.Fatal(err)
	}
	hist := c.History
	if len(hist) != 2 || hist[0].Text() != "two" {
		t.Errorf("the chat after the corrupt one: %+v", hist)
	}
	if !strings.Contains(logs.String(), "does not decode") {
		t.Errorf("the log does not report it:\n%s", logs.String())
	}
}

// echoModel answers every call with "ok".
func echoModel() agentloop.Model {
	return simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("ok")}, nil
	})
}

// do sends a request to h in-process and returns the status and body.
func do(h http.Handler, method, target, body string) (int, string) {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec.Code, rec.Body.String()
}

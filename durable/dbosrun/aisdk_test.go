package dbosrun_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/aisdk/aisdktest"
	"github.com/agentloop/agentloop/durable/dbosrun"
	"github.com/agentloop/agentloop/store/memstore"
)

// A Runner is an aisdk.Runner: a ChatServer runs its runs as DBOS
// workflows.
var _ aisdk.Runner = (*dbosrun.Runner)(nil)

func TestChatServer_OnDBOSAnswersAChatEndToEndAndRunsEachStepOnce(t *testing.T) {
	marksPath := filepath.Join(t.TempDir(), "marks")
	agent := markingAgent(marksPath, nil)
	st := memstore.New(memstore.Options{})
	t.Cleanup(func() { _ = st.Close() })
	chat := &aisdk.ChatServer{Agent: agent, Store: st, Logger: slog.New(slog.DiscardHandler), KeepAlive: -1}
	_, r := launch(t, agent, dbosrun.Options{OnItem: chat.RunItem})
	chat.Runner = r
	require.NoError(t, chat.Validate())
	srv := httptest.NewServer(chat.Routes("/api"))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { assert.NoError(t, chat.Shutdown(context.Background())) })

	client := &aisdktest.ChatClient{URL: srv.URL + "/api/chat", ChatID: "c"}
	msgs, err := client.Send(context.Background(), "go")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	var text string
	for _, p := range msgs[1].Parts {
		text += p.Text
	}
	assert.Equal(t, "done", text)

	c, err := st.GetChat(context.Background(), "c")
	require.NoError(t, err)
	assert.Equal(t, "done", c.History[len(c.History)-1].Text())
	assert.Equal(t, agentloop.RoleAssistant, c.History[len(c.History)-1].Role)
	n := marks(t, marksPath)
	assert.Equal(t, 5, len(n), "three model calls and two tool calls: %v", n)
	for line, count := range n {
		assert.Equal(t, 1, count, "%s ran %d times", line, count)
	}
}

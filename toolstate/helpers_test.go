package toolstate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
	"github.com/agentloop/agentloop/toolstate"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable clock for tests; it starts at a fixed UTC time.
type clock struct{ t time.Time }

func newClock() *clock { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time          { return c.t }
func (c *clock) Advance(d time.Duration) { c.t = c.t.Add(d) }

// okTool returns a tool that always succeeds.
func okTool(t testing.TB, name string) *agentloop.Tool {
	t.Helper()
	tool, err := agentloop.NewTool(name, "Succeeds.", func(ctx context.Context, _ struct{}) (string, error) {
		return name + " ok", nil
	})
	require.NoError(t, err)
	return tool
}

// failingTool returns a tool that fails unless called with {"ok": true}.
func failingTool(t testing.TB, name string) *agentloop.Tool {
	t.Helper()
	type args struct {
		OK bool `json:"ok,omitempty"`
	}
	tool, err := agentloop.NewTool(name, "Fails unless ok.", func(ctx context.Context, a args) (string, error) {
		if a.OK {
			return "worked", nil
		}
		return "", errors.New("backend unreachable")
	})
	require.NoError(t, err)
	return tool
}

// runOnce runs agent over one user message of conversation id with the
// tracker's hooks and returns the final text.
func runOnce(t *testing.T, agent *agentloop.Agent, tr *toolstate.Tracker, id, user string) string {
	t.Helper()
	text, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage(user)}, &agentloop.RunOptions{ConversationID: id, Hooks: tr.Hooks()}))
	require.NoError(t, err)
	return text
}

// newDocs returns an empty memstore with a chat for each of testChats and
// chat-1.
func newDocs(t testing.TB) *memstore.Store {
	t.Helper()
	st := memstore.New(memstore.Options{})
	chatStore(t, st)
	for _, id := range []string{"chat-1", "chat-2"} {
		require.NoError(t, st.PutChat(context.Background(), &store.Chat{ID: id}))
	}
	return st
}

// corrupt writes data as the chat's tool-state document, as a bad manual
// edit or an older build's bug would, and returns its version.
func corrupt(t testing.TB, docs store.Docs, chatID, data string) int64 {
	t.Helper()
	d, err := store.UpdateDoc(context.Background(), docs, chatID, toolstate.DocName, func(d *store.Doc) error {
		d.Data = []byte(data)
		return nil
	})
	require.NoError(t, err)
	return d.Version
}

package aisdk_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// outageAtEnd is a store whose EndStream fails while down is above zero
// (a database outage), counting down with each call.
type outageAtEnd struct {
	aisdk.ChatStore
	down  atomic.Int32
	calls atomic.Int32
}

var errOutage = errors.New("connection refused")

func (s *outageAtEnd) EndStream(ctx context.Context, l store.Lease, state store.StreamState) error {
	s.calls.Add(1)
	if s.down.Add(-1) >= 0 {
		return errOutage
	}
	return s.ChatStore.EndStream(ctx, l, state)
}

// postHello serves chat "c" on st with a model that answers "Hi." and posts
// its first message, "hello"; it returns the server and the 200 response.
func postHello(t *testing.T, st aisdk.ChatStore) (*aisdk.ChatServer, *httptest.ResponseRecorder) {
	t.Helper()
	h := &aisdk.ChatServer{
		Agent:     &agentloop.Agent{Model: simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Text("Hi.")}})},
		Store:     st,
		Authorize: func(*http.Request, string) error { return nil },
		Logger:    slog.New(slog.DiscardHandler),
		KeepAlive: -1,
	}
	body := `{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hello"}]}]}`
	req := httptest.NewRequest(http.MethodPost, "/api/chat", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	return h, rec
}

// A run that cannot end its stream because the database is down tries
// again with backoff, so that the chat is free as soon as the database is
// back, not once the lease runs out; its client's response ends at once,
// without waiting for the database.
func TestStored_ARunThatCannotEndItsStreamTriesAgainUntilTheStoreIsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New(memstore.Options{})
		defer mem.Close()
		st := &outageAtEnd{ChatStore: mem}
		st.down.Store(4)
		h, _ := postHello(t, st)
		if _, err := st.ActiveStream(context.Background(), "c"); err != nil {
			t.Errorf("the chat's stream when the response ended: %v, want it still active: the client does not wait for the database", err)
		}
		if err := h.Shutdown(context.Background()); err != nil { // waits for the run's end
			t.Error(err)
		}
		if n := st.calls.Load(); n != 5 {
			t.Errorf("EndStream was called %d times, want 5 (4 failures, then the end)", n)
		}
		if _, err := st.ActiveStream(context.Background(), "c"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the chat's stream after the run: %v, want none active", err)
		}
	})
}

// outageAtSave is a store whose PutChat fails from its second call on
// (the first creates the chat), while down is above zero: the database
// goes away during the run and comes back.
type outageAtSave struct {
	aisdk.ChatStore
	down  atomic.Int32
	calls atomic.Int32
}

func (s *outageAtSave) PutChat(ctx context.Context, c *store.Chat) error {
	if s.calls.Add(1) > 1 && s.down.Add(-1) >= 0 {
		return errOutage
	}
	return s.ChatStore.PutChat(ctx, c)
}

// A run whose save fails (the database is down) fails visibly, and once
// the database is back saves what its client saw before ending its
// stream: the answer is not lost after a reload. Found by the PostgreSQL
// outage measurement (outage_test.go): the text and tool call a client had
// seen were gone from the chat once the database was back.
func TestStored_ARunWhoseSaveFailsSavesWhatItsClientSawOnceTheStoreIsBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := memstore.New(memstore.Options{})
		defer mem.Close()
		st := &outageAtSave{ChatStore: mem}
		st.down.Store(4)
		h, rec := postHello(t, st)
		if !strings.Contains(rec.Body.String(), `"delta":"Hi."`) || !strings.Contains(rec.Body.String(), `"type":"error"`) {
			t.Fatalf("the client should have seen the answer, then the error of its save: %s", rec.Body.String())
		}
		if err := h.Shutdown(context.Background()); err != nil { // waits for the run's end, after its response
			t.Error(err)
		}
		c, err := mem.GetChat(context.Background(), "c")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.History.LastAssistantText(); got != "Hi." {
			t.Errorf("the stored chat's answer is %q, want the %q its client saw; history %+v", got, "Hi.", c.History)
		}
		if err := c.History.Validate(); err != nil {
			t.Error(err)
		}
		if _, err := mem.ActiveStream(context.Background(), "c"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the chat's stream after the run: %v, want none active", err)
		}
	})
}

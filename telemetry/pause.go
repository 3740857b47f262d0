package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop"
)

// PauseStore remembers the spans of paused runs, so that the run that
// resumes one can link its span to the paused run's span. A run that pauses
// saves its span context under one key per call it waits for; a resumed run
// loads the keys of the calls it continues and links to every span found.
//
// Keys are opaque strings made of the conversation id (from
// [agentloop.WithConversationID]), the call id and the tool name. Call ids
// are unique within a conversation, not across conversations (ids the loop
// makes up, for providers that give none, repeat), so pass a conversation
// id to keep two conversations from linking to each other's runs.
//
// The default, [NewMemoryPauseStore], links runs resumed in the same
// process. A store shared by several processes (a database, Redis…) links
// runs that resume on another replica; it must keep the trace id, span id
// and trace flags (and may keep the trace state) of the span context it is
// given. Implementations must be safe for concurrent use. Errors are logged
// (see [Options.Logger]) and cost the run its link, nothing else.
type PauseStore interface {
	// SavePause remembers span under key, replacing what was there.
	SavePause(ctx context.Context, key string, span trace.SpanContext) error
	// LoadPause returns the span context saved under key, or an invalid
	// (zero) SpanContext and a nil error when there is none.
	LoadPause(ctx context.Context, key string) (trace.SpanContext, error)
}

// DefaultPauseCapacity is how many keys a [NewMemoryPauseStore] store keeps
// when given a capacity of 0 or less.
const DefaultPauseCapacity = 10000

// NewMemoryPauseStore returns a PauseStore that keeps the last capacity keys
// in memory (DefaultPauseCapacity when capacity <= 0) and forgets the
// oldest beyond that, so paused runs that are never resumed cost bounded
// memory. A loaded key stays, so a resume that is retried links again.
func NewMemoryPauseStore(capacity int) PauseStore {
	if capacity <= 0 {
		capacity = DefaultPauseCapacity
	}
	return &memoryPauseStore{capacity: capacity, spans: make(map[string]trace.SpanContext)}
}

type memoryPauseStore struct {
	capacity int
	mu       sync.Mutex
	spans    map[string]trace.SpanContext
	order    []string // the keys of spans, oldest first
}

func (s *memoryPauseStore) SavePause(_ context.Context, key string, span trace.SpanContext) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.spans[key]; !ok {
		s.order = append(s.order, key)
	}
	s.spans[key] = span
	for len(s.spans) > s.capacity {
		delete(s.spans, s.order[0])
		s.order = s.order[1:]
	}
	return nil
}

func (s *memoryPauseStore) LoadPause(_ context.Context, key string) (trace.SpanContext, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spans[key], nil
}

// pauseKey is the key of a paused call in a PauseStore.
func pauseKey(conversationID string, call agentloop.ToolCall) string {
	return conversationID + "\x00" + call.ID + "\x00" + call.Name
}

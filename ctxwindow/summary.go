package ctxwindow

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash"
	"sync"

	"github.com/agentloop/agentloop"
)

// Summary stands for the older part of a conversation in the requests that
// [Summarize] shapes: it replaces the messages History[From:Through] of what
// is sent (never of the stored history, which keeps everything). It is kept
// in a [SummaryStore] under the conversation's id, so that later model calls
// and runs use it instead of summarizing again, and is made anew, from
// itself and the messages after it, when the conversation has grown past it.
//
// Its JSON form ({"text","from","through","digest"}) is stable; stores may
// keep it as is.
type Summary struct {
	// Text is the summary, as the summarizing model wrote it.
	Text string `json:"text"`
	// From is the index of the first message the summary replaces: the
	// one after the first user message (and the leading system messages).
	From int `json:"from"`
	// Through is the index after the last message it replaces. A summary
	// always ends where a turn ends, so no tool call is parted from its
	// result.
	Through int `json:"through"`
	// Digest identifies History[:Through]: a SHA-256, in hex, of each
	// message's role and parts, with every field's length and its first
	// and last 64 bytes (so that checking it costs the same for a short and
	// a long result). A history whose start no longer has this digest
	// (edited, regenerated, another conversation's) does not use the
	// summary.
	Digest string `json:"digest"`
}

// SummaryStore keeps the [Summary] of each conversation, under the id given
// with [agentloop.WithConversationID]. Implementations must be safe for
// concurrent use. A [Manager] loads a conversation's summary the first time
// one of its runs needs it, and saves each new one; two runs of one
// conversation at once may both save, and the last save wins (each summary
// is valid on its own, and its Digest says which history it fits).
//
// The interface is small so that it adapts to any store in a few lines: a
// versioned store of named documents per conversation keeps the summary's
// JSON as a document named "summary", answering a missing one with false.
type SummaryStore interface {
	// LoadSummary returns the conversation's summary, and false when it has
	// none.
	LoadSummary(ctx context.Context, conversationID string) (Summary, bool, error)
	// SaveSummary stores s as the conversation's summary, replacing any.
	SaveSummary(ctx context.Context, conversationID string, s Summary) error
}

// ErrEmptyID is returned by [MemoryStore] for an empty conversation id.
var ErrEmptyID = errors.New("ctxwindow: empty conversation id")

// MemoryStore is a [SummaryStore] in memory, for tests and single-process
// apps. It keeps one summary per conversation, until [MemoryStore.Delete].
// The zero value is ready to use; it is safe for concurrent use and must
// not be copied after first use.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string]Summary
}

// LoadSummary implements [SummaryStore].
func (s *MemoryStore) LoadSummary(_ context.Context, id string) (Summary, bool, error) {
	if id == "" {
		return Summary{}, false, ErrEmptyID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sum, ok := s.m[id]
	return sum, ok, nil
}

// SaveSummary implements [SummaryStore].
func (s *MemoryStore) SaveSummary(_ context.Context, id string, sum Summary) error {
	if id == "" {
		return ErrEmptyID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]Summary)
	}
	s.m[id] = sum
	return nil
}

// Delete forgets the conversation's summary; deleting a missing one is not
// an error.
func (s *MemoryStore) Delete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

// digest returns the hex SHA-256 of the content of h: every field a provider
// could send, each as its length, its first and its last sampleBytes bytes;
// not the messages' ids. Sampling keeps the cost per message bounded: the
// digest is checked on every model call that uses a summary.
func digest(h agentloop.History) string {
	d := digester{h: sha256.New()}
	for _, m := range h {
		d.str(string(m.Role))
		d.num(len(m.Parts))
		for _, p := range m.Parts {
			d.str(string(p.Type))
			d.str(p.Text)
			d.str(p.Signature)
			d.str(p.Redacted)
			if c := p.ToolCall; c != nil {
				d.str(c.ID)
				d.str(c.Name)
				d.str(string(c.Args))
			}
			if r := p.ToolResult; r != nil {
				d.str(r.CallID)
				d.str(r.Name)
				d.str(r.Content)
				d.flag(r.IsError)
			}
			if a := p.Approval; a != nil {
				d.str(a.CallID)
				d.str(a.ID)
				d.flag(a.Approved)
				d.str(a.Reason)
			}
			if f := p.File; f != nil {
				d.str(f.MediaType)
				d.str(f.Filename)
				d.str(f.URL)
				d.str(string(f.Data))
			}
		}
	}
	return hex.EncodeToString(d.sum())
}

// digester feeds length-prefixed fields to a hash through one buffer.
type digester struct {
	h   hash.Hash
	buf []byte
}

func (d *digester) num(n int) {
	d.buf = binary.AppendUvarint(d.buf, uint64(n))
	d.flush(false)
}

func (d *digester) flag(b bool) {
	if b {
		d.num(1)
	} else {
		d.num(0)
	}
}

func (d *digester) str(s string) {
	d.buf = binary.AppendUvarint(d.buf, uint64(len(s)))
	if len(s) > 2*sampleBytes {
		d.buf = append(d.buf, s[:sampleBytes]...)
		s = s[len(s)-sampleBytes:]
	}
	d.buf = append(d.buf, s...)
	d.flush(false)
}

const (
	// sampleBytes is how much of each end of a field the digest reads.
	sampleBytes = 64
	// digestBuf is the size of the buffer a digester writes to its hash.
	digestBuf = 32 << 10
)

func (d *digester) flush(force bool) {
	if force || len(d.buf) >= digestBuf {
		d.h.Write(d.buf)
		d.buf = d.buf[:0]
	}
}

func (d *digester) sum() []byte {
	d.flush(true)
	return d.h.Sum(nil)
}

package ctxwindow

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/store"
)

// Summary stands for the older part of a conversation in the requests that
// [Summarize] shapes: it replaces the messages History[From:Through] of what
// is sent (never of the stored history, which keeps everything). It is kept
// in the store (Config.Docs) as the conversation's document [SummaryDoc], so that later model calls
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

// SummaryDoc is the name of the document that holds a conversation's
// [Summary], as its JSON: a document of the chat with the conversation's
// id, so that it goes with the chat, or, for a conversation that is no chat
// of the store, the document of no chat named
// store.ChatlessName(id, SummaryDoc) (see [store.UpdateConversationDoc]).
const SummaryDoc = "summary"

// loadSummary returns the conversation's summary from docs, and false when
// it has none. A document that does not decode is an error (the Manager
// then summarizes afresh, and its next save replaces the document).
func loadSummary(ctx context.Context, docs store.Docs, id string) (Summary, bool, error) {
	doc, err := store.GetConversationDoc(ctx, docs, id, SummaryDoc)
	if errors.Is(err, store.ErrNotFound) {
		return Summary{}, false, nil
	}
	if err != nil {
		return Summary{}, false, err
	}
	var s Summary
	if err := json.Unmarshal(doc.Data, &s); err != nil {
		return Summary{}, false, fmt.Errorf("ctxwindow: the summary of conversation %q (version %d) does not decode: %w", id, doc.Version, err)
	}
	return s, true, nil
}

// saveSummary stores s as the conversation's summary, replacing any, as an
// optimistic write that retries on a conflict: two runs of one
// conversation may both save, and the last save wins (each summary is
// valid on its own, and its Digest says which history it fits).
func saveSummary(ctx context.Context, docs store.Docs, id string, s Summary) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	_, err = store.UpdateConversationDoc(ctx, docs, id, SummaryDoc, func(doc *store.Doc) error {
		doc.Data = data
		return nil
	})
	return err
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

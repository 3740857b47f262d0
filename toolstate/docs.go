package toolstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentloop/agentloop/store"
)

// DocName is the name of the document that holds a conversation's tool
// states, as [Marshal] writes them: a document of the chat with the
// conversation's id, or, for a conversation that is no chat of the store,
// the document of no chat named store.ChatlessName(id, DocName) (see
// [store.UpdateConversationDoc]).
const DocName = "toolstate"

// ErrEmptyID is wrapped by the error of a call with an empty conversation
// id.
var ErrEmptyID = errors.New("toolstate: empty conversation id")

// Load returns the tool states of the conversation id, kept in docs. The
// caller owns the state; changing it changes nothing stored. A conversation
// with no states yet gets a fresh one (NewState(Config{})). A stored state
// that cannot be decoded is an error wrapping [ErrCorrupt] or [ErrVersion]
// that names the conversation and the document's version.
func Load(ctx context.Context, docs store.Docs, id string) (*State, error) {
	doc, err := get(ctx, docs, id)
	if err != nil {
		return nil, err
	}
	if doc == nil {
		return NewState(Config{}), nil
	}
	return decodeDoc(id, doc)
}

// LoadOrFresh is [Load] that goes on past a corrupt state: if the stored
// state is corrupt or of an unknown version, it returns a fresh state with
// cfg together with the error, so the caller can report it and go on; any
// other error (the store's, a done ctx) returns a nil state.
func LoadOrFresh(ctx context.Context, docs store.Docs, id string, cfg Config) (*State, error) {
	s, err := Load(ctx, docs, id)
	if undecodable(err) {
		return NewState(cfg), err
	}
	return s, err
}

// Update is an optimistic read-modify-write of the conversation's tool
// states: it loads the state as [Load] does, calls fn with it, and writes
// the result naming the document version it read, unless fn returns an
// error (which Update returns). When another writer (on any replica) got
// there first, it loads again and calls fn again, so concurrent updates
// lose nothing without a lock; fn may so be called more than once and must
// only change the state it is given, and not keep it. A result that
// [Marshal] refuses is not written: the error wraps [ErrInvalidState]. An
// update that leaves the state as it was writes nothing. A corrupt stored
// state is an error wrapping [ErrCorrupt] or [ErrVersion], and fn is not
// called: [Discard] sets it aside.
func Update(ctx context.Context, docs store.Docs, id string, fn func(*State) error) error {
	if err := check(docs, id); err != nil {
		return err
	}
	var inner error // the error of the func below, returned as it is
	_, err := store.UpdateConversationDoc(ctx, docs, id, DocName, func(doc *store.Doc) error {
		inner = apply(id, doc, fn)
		return inner
	})
	if err != nil && err != inner {
		return fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	return err
}

// apply decodes the document (a new one is a fresh state), calls fn, and
// encodes the result into it.
func apply(id string, doc *store.Doc, fn func(*State) error) error {
	s := NewState(Config{})
	if doc.Version != 0 {
		var err error
		if s, err = decodeDoc(id, doc); err != nil {
			return err
		}
	}
	if err := fn(s); err != nil {
		return err
	}
	data, err := Marshal(s)
	if err != nil {
		return fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	doc.Data = data
	return nil
}

// Discard sets aside the conversation's stored tool states if they cannot
// be decoded (Load fails with [ErrCorrupt] or [ErrVersion]), so that the
// next Load is fresh; a state that decodes, or none, is left as it is. The
// bytes set aside are kept, for a person to look at, as the document
// [CorruptName] of the same chat (or of no chat), which goes with the chat.
// Repair a corrupt conversation with Discard rather than by deleting the
// document: when several runs meet the same corrupt state at once, the
// first one's Discard sets it aside and the others' do nothing, so no
// update made after the repair is lost.
func Discard(ctx context.Context, docs store.Docs, id string) error {
	for {
		doc, err := get(ctx, docs, id)
		if err != nil || doc == nil {
			return err
		}
		if _, err := decodeDoc(id, doc); err == nil {
			return nil
		}
		aside := &store.Doc{ChatID: doc.ChatID, Name: CorruptName(doc.Name, doc.Version), Data: doc.Data}
		if err := docs.PutDoc(ctx, aside); err != nil && !errors.Is(err, store.ErrConflict) {
			// ErrConflict: another run set this version aside already.
			return fmt.Errorf("toolstate: conversation %q: keeping the corrupt state aside: %w", id, err)
		}
		err = docs.DeleteDoc(ctx, doc.ChatID, doc.Name, doc.Version)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil
		case errors.Is(err, store.ErrConflict):
			continue
		case err != nil:
			return fmt.Errorf("toolstate: conversation %q: %w", id, err)
		}
		return nil
	}
}

// CorruptName is the name under which [Discard] keeps the bytes of the
// document name, at the given version, that did not decode:
// "corrupt/{name}/{version}".
func CorruptName(name string, version int64) string {
	return "corrupt/" + name + "/" + strconv.FormatInt(version, 10)
}

var errNoDocs = errors.New("toolstate: no store (the store.Docs is nil)")

func check(docs store.Docs, id string) error {
	switch {
	case id == "":
		return ErrEmptyID
	case docs == nil:
		return errNoDocs
	}
	return nil
}

// get returns the conversation's document, or nil (and no error) when
// there is none.
func get(ctx context.Context, docs store.Docs, id string) (*store.Doc, error) {
	if err := check(docs, id); err != nil {
		return nil, err
	}
	doc, err := store.GetConversationDoc(ctx, docs, id, DocName)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("toolstate: conversation %q: %w", id, err)
	}
	return doc, nil
}

// decodeDoc decodes a stored document; the error names the conversation.
func decodeDoc(id string, doc *store.Doc) (*State, error) {
	s, err := Unmarshal(doc.Data)
	if err != nil {
		return nil, fmt.Errorf("toolstate: conversation %q (document %q, version %d): %w", id, doc.Name, doc.Version, err)
	}
	return s, nil
}
